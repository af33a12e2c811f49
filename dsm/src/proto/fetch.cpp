#include "proto/fetch.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <utility>

#include "mem/page_copy.hpp"
#include "proto/codec.hpp"
#include "proto/diffs.hpp"
#include "proto/dispatch.hpp"
#include "proto/inbox.hpp"
#include "proto/notices.hpp"
#include "proto/state.hpp"
#include "proto/within.hpp"
#include "runtime/stats.hpp"

namespace dsm::proto {

namespace {

// A fetch of many pages from one writer is cut into at least this many requests, so that
// the writer encodes the next reply while this rank applies the last one: served and
// applied one after the other, the two ranks would take turns at being idle.
constexpr std::size_t pipelined_requests = 4;
// ... but no request smaller than this, where a round trip costs more than the copies.
constexpr std::size_t min_request_items = 32;
// A fetch of this many pages or more (twice a core's L2 here) copies whole pages past the
// cache: the loop reads them long after the copy has pushed them out.
constexpr std::size_t streaming_pages = 512;

// One change a page needs, in application order.
struct Want {
  Notice n{};
  std::span<const std::byte> data;  // once it arrived
  std::int32_t reply = -1;          // the reply `data` points into (-1: this rank's own)
  bool got = false;
  bool end_copy = false;  // `data` is the interval's end, sent in place of its diff
  bool from_zeros = false;  // asked as item_from_zeros
  std::optional<std::uint32_t> through;  // came as whole_through
};

struct PagePlan {
  std::uint32_t page;
  std::vector<Want> wants;
  std::size_t missing = 0;
  bool done = false;
};

// The replies of one fetch and the pages they complete, applied as each one lands.
class Fetch {
 public:
  Fetch(std::vector<PagePlan> plans, std::uint32_t flags, std::span<const std::uint32_t> to_open)
      : plans_(std::move(plans)), flags_(flags), streaming_(plans_.size() >= streaming_pages), to_open_(to_open) {}

  PagePlan* find(std::uint32_t page) {
    auto it = std::lower_bound(plans_.begin(), plans_.end(), page,
                               [](const PagePlan& p, std::uint32_t pg) { return p.page < pg; });
    return it != plans_.end() && it->page == page ? &*it : nullptr;
  }

  // Pages that need nothing from another rank (only their own changes) are ready at once.
  void apply_ready() {
    std::vector<std::uint32_t> done;
    {
      std::lock_guard lk(state().mu);
      for (auto& p : plans_)
        if (p.missing == 0) finish(p, done);
      if (streaming_) mem::stream_fence();
    }
    close_read(done);
  }

  // Takes in one reply and applies every page it completes.
  void take(Reply rep) {
    const auto slot = std::int32_t(replies_.size());
    replies_.push_back(std::move(rep));
    refs_.push_back(0);
    const Reply& r = replies_.back();
    std::vector<std::uint32_t> done;
    {
      auto& s = state();
      std::lock_guard lk(s.mu);
      try {
        decode(r, slot, done);
      } catch (const codec::DecodeError& e) {
        fatal("malformed diff reply from rank %d: %s", r.src, e.what());
      }
      if (streaming_) mem::stream_fence();  // before the pages are valid and the reply's buffer goes
    }
    release_if_unused(slot);
    stats::counters().pages_fetched.fetch_add(done.size(), std::memory_order_relaxed);
    close_read(done);
  }

  void check_complete() const {
    for (const auto& p : plans_) {
      if (p.done) continue;
      for (const Want& w : p.wants)
        if (!w.got) fatal("rank %u did not send the change of page %u (interval %u)", w.n.proc, p.page, w.n.idx);
    }
  }

 private:
  void decode(const Reply& rep, std::int32_t slot, std::vector<std::uint32_t>& done) {
    codec::Reader r(rep.payload());
    const auto src = std::uint32_t(rep.src);
    if (r.get<std::uint32_t>() != src) throw codec::DecodeError("signed by another rank than its sender");
    if (r.get<std::uint32_t>() != flags_) throw codec::DecodeError("answers a request of another kind");
    const auto n = r.count(13);
    for (std::uint32_t i = 0; i < n; ++i) {
      const auto page = r.get<std::uint32_t>();
      const auto idx = r.get<std::uint32_t>();
      const auto kind = r.get<std::uint8_t>();
      const auto through = kind == whole_through ? std::optional(r.get<std::uint32_t>()) : std::nullopt;
      const auto bytes = r.bytes();
      if (through && (*through <= idx || bytes.size() != mem::page_size))
        throw codec::DecodeError("a whole page as an interval left it that is not newer than the one asked for, or is not a page");
      PagePlan* p = find(page);
      if (!p) throw codec::DecodeError("a change of a page that was not asked for");
      if (kind == valid_copy) {
        if (!(flags_ & at_collection) || std::none_of(p->wants.begin(), p->wants.end(), [&](const Want& w) { return w.n.proc == src; }))
          throw codec::DecodeError("a whole copy of a page that was not asked of that rank");
        if (bytes.size() != mem::page_size) throw codec::DecodeError("a whole copy that is not a page");
        if (p->done) continue;  // another writer's copy came first: every valid copy is the same
        // A valid copy at a collection holds every change there is.
        apply_change(page, {src, 0, true}, bytes, streaming_);
        finish(*p, done, false);
        continue;
      }
      auto w = std::find_if(p->wants.begin(), p->wants.end(),
                            [&](const Want& w) { return w.n.proc == src && w.n.idx == idx; });
      if (w == p->wants.end() || w->got) throw codec::DecodeError("a change that was not asked for, or sent twice");
      if (kind != item_diff && kind != item_whole && kind != end_copy && kind != whole_through)
        throw codec::DecodeError("a change of unknown kind");
      if ((kind == item_whole || kind == whole_through) != w->n.whole)
        throw codec::DecodeError("a whole page where a diff was asked, or the reverse");
      if (kind == end_copy && (!w->from_zeros || bytes.size() != mem::page_size))
        throw codec::DecodeError("an interval's end that was not asked for, or is not a page");
      w->got = true;
      if (p->done) continue;  // a valid copy made it up to date
      w->data = bytes;
      w->reply = slot;
      w->end_copy = kind == end_copy;
      w->through = through;
      ++refs_[std::size_t(slot)];
      if (--p->missing == 0) finish(*p, done);
    }
    r.expect_end();
  }

  // Applies a page's changes in application order (unless a valid copy did already) and
  // makes it valid. Under mu.
  void finish(PagePlan& p, std::vector<std::uint32_t>& done, bool apply = true) {
    auto& s = state();
    // An interval's end is applied as the whole page it is.
    if (apply)
      for (const Want& w : p.wants) apply_change(p.page, {w.n.proc, w.n.idx, w.n.whole || w.end_copy}, w.data, streaming_);
    p.done = true;
    // A change noticed later that the page holds already is not fetched again (notices.cpp).
    s.heap.pages[p.page].fetched_through = p.wants.size() == 1 && p.wants[0].through ? Page::Through{p.wants[0].n.proc, *p.wants[0].through} : Page::Through{};
    for (const Want& w : p.wants)
      if (w.got && w.reply >= 0 && --refs_[std::size_t(w.reply)] == 0) to_release_.push_back(w.reply);
    auto& pg = s.heap.pages[p.page];
    pg.pending.clear();
    pg.valid = true;
    done.push_back(p.page);
  }

  // A reply whose changes were all applied gives its buffer back to the transport for the
  // next one.
  // (A reply's count may reach zero and rise again while it is decoded: checked here.)
  void release_if_unused(std::int32_t slot) {
    to_release_.push_back(slot);
    for (auto k : to_release_)
      if (refs_[std::size_t(k)] == 0) replies_[std::size_t(k)] = {};
    to_release_.clear();
  }

  // Makes `done` read-only, but for the pages about to be opened for writing.
  void close_read(std::vector<std::uint32_t>& done) {
    if (!to_open_.empty())
      std::erase_if(done, [&](std::uint32_t p) { return std::binary_search(to_open_.begin(), to_open_.end(), p); });
    protect(done, mem::Prot::read);
  }

  std::vector<PagePlan> plans_;  // by page
  std::uint32_t flags_;
  bool streaming_;
  std::span<const std::uint32_t> to_open_;
  std::vector<Reply> replies_;
  std::vector<std::uint32_t> refs_;  // per reply: changes taken from it not yet applied
  std::vector<std::int32_t> to_release_;
};

}  // namespace

void make_valid(std::vector<std::uint32_t> pages, std::uint32_t flags, std::span<const std::uint32_t> to_open) {
  if (!state().within.edges.empty()) flags |= within;
  const bool collecting = flags & at_collection;
  auto& s = state();
  std::erase_if(pages, [&](std::uint32_t p) {
    prefetch_page(s.heap.pages, p + prefetch_distance);
    return s.heap.pages[p].valid;
  });
  if (pages.empty()) return;
  std::sort(pages.begin(), pages.end());
  pages.erase(std::unique(pages.begin(), pages.end()), pages.end());
  stats::Timer timer(stats::counters().protocol_ns);
  const std::uint64_t t0 = stats::now_ns();
  // What each page needs, and from whom: items (page, notice, kind) per writer.
  struct Ask {
    std::uint32_t page;
    Notice n;
    std::uint8_t kind;
  };
  std::vector<PagePlan> plans;
  plans.reserve(pages.size());
  std::map<int, std::vector<Ask>> asks;
  std::map<std::uint64_t, std::vector<std::byte>> own;  // own diffs to re-apply
  {
    std::lock_guard lk(s.mu);
    for (std::size_t i = 0, j = 1; i < pages.size(); i = j++) {  // runs of consecutive pages
      while (j < pages.size() && pages[j] == pages[j - 1] + 1) ++j;
      take_whole(pages[i], pages[j - 1] + 1);
    }
    for (auto page : pages) {
      PagePlan plan{page, {}, 0, false};
      for (const Notice& n : needed_changes(page)) {
        Want w;
        w.n = n;
        if (n.proc == std::uint32_t(s.me)) {
          if (s.heap.pages[page].twin && s.heap.pages[page].twin_idx == n.idx) encode_twin(page);
          const OwnChange c = own_change(page, n.idx);
          auto& diff = own[diff_key(page, n.idx)];
          if (c.diff) diff = *c.diff;
          else if (c.end) encode_diff(zero_page, c.end, diff);
          w.data = diff;
          w.got = true;
        } else {
          // A page still all zero here takes the first change, if the writer's twin was
          // all zero too, as the page the interval left: the same bytes as applying its
          // diff, without encoding one (an array another rank initialized).
          w.from_zeros = !n.whole && plan.wants.empty() && s.heap.pages[page].zero;
          asks[int(n.proc)].push_back({page, n, n.whole ? item_whole : w.from_zeros ? item_from_zeros : item_diff});
          ++plan.missing;
        }
        plan.wants.push_back(w);
      }
      plans.push_back(std::move(plan));
    }
  }
  Fetch fetch(std::move(plans), flags, to_open);
  // The requests, per writer, sent a few at a time: the next one goes when a reply lands.
  // All at once, a writer would queue up every reply (hundreds of MiB for a large
  // prefetch) in its transport, and this rank would copy them in while it should apply.
  std::map<int, std::vector<std::vector<std::byte>>> requests;
  std::size_t total = 0;
  for (auto& [proc, items] : asks) {
    const std::size_t cut = std::clamp((items.size() + pipelined_requests - 1) / pipelined_requests,
                                       min_request_items, std::size_t(max_request_items));
    for (std::size_t from = 0, n = 0; from < items.size(); from += n) {
      codec::Writer w;
      w.put<std::uint32_t>(flags);
      n = std::min(cut, items.size() - from);
      // At a collection the writer answers a page once, whole, for all its items in one
      // request: a page's items are not cut across two (unless they alone fill one).
      if (collecting && from + n < items.size())
        for (std::size_t c = n; c > 0; --c)
          if (items[from + c].page != items[from + c - 1].page) {
            n = c;
            break;
          }
      w.put<std::uint32_t>(std::uint32_t(n));
      for (std::size_t i = from; i < from + n; ++i) {
        w.put(items[i].page);
        w.put(items[i].n.idx);
        w.put(items[i].kind);
        if (flags & within) {
          const std::optional<ByteRange> read = within_range(items[i].page);
          w.put<std::uint16_t>(read ? read->lo : 0);
          w.put<std::uint16_t>(read ? read->hi : std::uint16_t(mem::page_size));
        }
      }
      requests[proc].push_back(w.take());
      ++total;
    }
  }
  std::map<int, std::size_t> next, unanswered;  // per writer: requests sent, not answered
  auto send_next = [&](int proc) {
    auto& k = next[proc];
    s.net->send(proc, diff_request, requests[proc][k]);
    requests[proc][k] = {};
    ++k;
    ++unanswered[proc];
  };
  for (auto& [proc, reqs] : requests)
    for (std::size_t i = 0; i < std::min(reqs.size(), pipelined_requests); ++i) send_next(proc);
  stats::counters().fetch_requests.fetch_add(total, std::memory_order_relaxed);
  fetch.apply_ready();
  // Replies are applied as they land, while the writers serve the next requests.
  for (std::size_t i = 0; i < total; ++i) {
    Reply rep = [&] {
      stats::Timer wait(stats::counters().comm_wait_ns);
      return wait_inbox(diff_reply, -1);
    }();
    const auto left = unanswered.find(rep.src);
    if (left == unanswered.end() || left->second == 0)
      fatal("malformed diff reply from rank %d: more replies than this rank sent requests", rep.src);
    --left->second;
    if (next[rep.src] < requests[rep.src].size()) send_next(rep.src);
    fetch.take(std::move(rep));
  }
  fetch.check_complete();
  if (pages.size() >= bulk_fetch_pages && total) s.balancer.page_seconds.add((stats::now_ns() - t0) * 1e-9 / double(pages.size()));
}

}  // namespace dsm::proto
