// Asymmetric rate filter (Siegell, "Automatic Generation of Parallel Programs with Dynamic
// Load Balancing for a Network of Workstations", section 5.4, table 5.1): an exponential smoothing
// whose history fraction h comes from a small state machine that remembers the recent trend.
// Slowdowns are trusted sooner than speed-ups: moving work towards a rank by mistake makes
// every other rank wait, moving work away by mistake only idles that one rank.
#pragma once

namespace dsm::lb {

struct RateFilter {
  enum State { down3, down2, down1, constant, up1, up2, up3 };
  State state = constant;
  double value = 0;  // adjusted rate; 0 until the first sample
  bool primed = false;
};

// Feeds one raw rate and returns the adjusted rate. enabled = false passes raw through.
double filter_rate(RateFilter& f, double raw, bool enabled);

}  // namespace dsm::lb
