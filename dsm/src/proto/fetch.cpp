#include "proto/fetch.hpp"

#include <algorithm>
#include <map>
#include <tuple>
#include <utility>

#include "proto/codec.hpp"
#include "proto/diffs.hpp"
#include "proto/dispatch.hpp"
#include "proto/inbox.hpp"
#include "proto/notices.hpp"
#include "proto/state.hpp"
#include "runtime/stats.hpp"

namespace dsm::proto {

void make_valid(std::vector<std::uint32_t> pages, bool collecting) {
  auto& s = state();
  std::erase_if(pages, [&](std::uint32_t p) {
    prefetch_page(s.heap.pages, p + prefetch_distance);
    return s.heap.pages[p].valid;
  });
  if (pages.empty()) return;
  stats::Timer timer(stats::counters().protocol_ns);
  // What each page needs, and from whom, asked in requests of max_request_items.
  std::map<std::uint32_t, std::vector<Notice>> plan;
  std::map<int, std::vector<std::pair<std::uint32_t, Notice>>> asks;
  std::map<std::uint64_t, std::vector<std::byte>> own;  // own diffs to re-apply
  {
    std::lock_guard lk(s.mu);
    for (std::size_t i = 0, j = 1; i < pages.size(); i = j++) {  // runs of consecutive pages
      while (j < pages.size() && pages[j] == pages[j - 1] + 1) ++j;
      take_whole(pages[i], pages[j - 1] + 1);
    }
    for (auto page : pages) {
      auto need = needed_changes(page);
      for (const Notice& n : need) {
        if (n.proc == std::uint32_t(s.me)) {
          if (s.heap.pages[page].twin && s.heap.pages[page].twin_idx == n.idx) encode_twin(page);
          const OwnChange c = own_change(page, n.idx);
          auto& diff = own[diff_key(page, n.idx)];
          if (c.diff) diff = *c.diff;
          else if (c.end) encode_diff(zero_page, c.end, diff);
        } else {
          asks[int(n.proc)].push_back({page, n});
        }
      }
      plan[page] = std::move(need);
    }
  }
  std::size_t sent = 0;
  std::map<int, std::size_t> unanswered;  // requests per rank
  for (auto& [proc, items] : asks)
    for (std::size_t from = 0, n = 0; from < items.size(); from += n) {
      codec::Writer w;
      w.put<std::uint32_t>(collecting ? at_collection : 0);
      n = std::min<std::size_t>(max_request_items, items.size() - from);
      // At a collection the writer answers a page once, whole, for all its items in one
      // request: a page's items are not cut across two (unless they alone fill one).
      if (collecting && from + n < items.size())
        for (std::size_t cut = n; cut > 0; --cut)
          if (items[from + cut].first != items[from + cut - 1].first) {
            n = cut;
            break;
          }
      w.put<std::uint32_t>(std::uint32_t(n));
      for (std::size_t i = from; i < from + n; ++i) {
        w.put(items[i].first);
        w.put(items[i].second.idx);
        w.put<std::uint8_t>(items[i].second.whole);
      }
      s.net->send(proc, diff_request, w.buffer());
      ++sent;
      ++unanswered[proc];
    }
  stats::counters().fetch_requests.fetch_add(sent, std::memory_order_relaxed);
  // Replies, keyed by (page, proc, idx); at a collection, whole valid copies by page.
  std::vector<Reply> replies;
  std::map<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t>, std::span<const std::byte>> got;
  std::map<std::uint32_t, std::pair<std::uint32_t, std::span<const std::byte>>> copies;
  {
    stats::Timer wait(stats::counters().comm_wait_ns);
    std::uint64_t t0 = stats::now_ns();
    for (std::size_t i = 0; i < sent; ++i) replies.push_back(wait_inbox(diff_reply, -1));
    if (pages.size() >= bulk_fetch_pages && sent)
      s.balancer.page_seconds.add((stats::now_ns() - t0) * 1e-9 / double(pages.size()));
  }
  for (const auto& rep : replies) {
    try {
      codec::Reader r(rep.payload);
      const auto src = std::uint32_t(rep.src);
      if (r.get<std::uint32_t>() != src) throw codec::DecodeError("signed by another rank than its sender");
      const auto left = unanswered.find(rep.src);
      if (left == unanswered.end() || left->second == 0) throw codec::DecodeError("more replies than this rank sent requests");
      --left->second;
      if (r.get<std::uint32_t>() != (collecting ? at_collection : 0)) throw codec::DecodeError("answers a request of another kind");
      auto n = r.count(13);
      for (std::uint32_t i = 0; i < n; ++i) {
        auto page = r.get<std::uint32_t>();
        auto idx = r.get<std::uint32_t>();
        const auto whole = r.get<std::uint8_t>();
        if (whole == valid_copy) {
          const auto need = plan.find(page);
          if (!collecting || need == plan.end() ||
              std::none_of(need->second.begin(), need->second.end(), [&](const Notice& n) { return n.proc == src; }))
            throw codec::DecodeError("a whole copy of a page that was not asked of that rank");
          const auto bytes = r.bytes();
          if (bytes.size() != mem::page_size) throw codec::DecodeError("a whole copy that is not a page");
          copies[page] = {src, bytes};
        } else {
          got[{page, src, idx}] = r.bytes();
        }
      }
      r.expect_end();
    } catch (const codec::DecodeError& e) {
      fatal("malformed diff reply from rank %d: %s", rep.src, e.what());
    }
  }
  std::lock_guard lk(s.mu);
  for (auto& [page, need] : plan) {
    if (const auto copy = copies.find(page); copy != copies.end()) {
      // A valid copy at a collection holds every change there is.
      apply_change(page, {copy->second.first, 0, true}, copy->second.second);
    } else {
      for (const Notice& n : need) {
        if (n.proc == std::uint32_t(s.me)) {
          apply_change(page, n, own[diff_key(page, n.idx)]);
          continue;
        }
        auto it = got.find({page, n.proc, n.idx});
        if (it == got.end()) fatal("rank %u did not send the change of page %u (interval %u)", n.proc, page, n.idx);
        apply_change(page, n, it->second);
      }
    }
    auto& pg = s.heap.pages[page];
    pg.pending.clear();
    pg.valid = true;
  }
  stats::counters().pages_fetched.fetch_add(pages.size(), std::memory_order_relaxed);
  protect(pages, mem::Prot::read);
}

}  // namespace dsm::proto
