// What the ranks report: the statistics each sent at dsm::finalize (--stats prints them as a
// table, --stats-json writes them as they came), and the live lines of this host's
// statistics board (--watch, and at --timeout).
#pragma once

#include <string>
#include <vector>

#include "job/board.hpp"
#include "options.hpp"

namespace dsm::launcher {

// `reports`: each rank's statistics, a JSON object text (empty if it sent none). Prints the
// --stats tables on stdout (the counters; the bytes each rank sent to each, in small jobs; the
// balancer's loops) and writes the --stats-json file, as `opt` asks; false when the file
// could not be written (said on stderr).
bool report_stats(const std::vector<std::string>& reports, const Options& opt);

// Prints the board's line for each local rank on stderr (the program's output stays apart),
// after `label`.
void show_board(const board::Board& board, const std::string& label);

}  // namespace dsm::launcher
