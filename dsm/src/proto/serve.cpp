#include "proto/serve.hpp"

#include <algorithm>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "mem/heap.hpp"
#include "proto/barrier_codec.hpp"
#include "proto/diffs.hpp"
#include "proto/dispatch.hpp"
#include "proto/holds.hpp"
#include "proto/state.hpp"
#include "runtime/stats.hpp"

namespace dsm::proto {

namespace {

// Pushes a page for this many barriers after each fetch: a reader that stopped reading
// costs a few stale copies, one that still reads renews with its next fetch.
constexpr std::uint32_t push_barriers = 64;

// Only a request for a few pages (a halo) registers its reader unasked: a bulk fetch (a block
// that moved to another rank) is mostly a one-off, and pushing it back at every barrier would
// copy megabytes for nothing. A bulk fetch flagged `rereads` (a loop reading the same runs as
// at its last execution) registers its reader for fewer pushes, each a page updated in place where a
// fetch closes it at the barrier and opens it again: two protection changes, and on a host
// whose page tables are virtualized in software two shadow faults a page. adi reads at
// every time step, by rows, the columns the other rank wrote.
constexpr std::size_t max_halo_pages = 16;
constexpr std::uint32_t reread_pushes = 16;

// A reader's latest request says which bytes it reads.
void register_reader(std::uint32_t page, std::uint32_t rank, std::uint32_t pushes, std::uint16_t lo, std::uint16_t hi) {
  auto& readers = state().heap.pages[page].readers;
  for (auto& r : readers)
    if (r.rank == rank) {
      r.left = std::max(r.left, pushes);
      r.lo = lo;
      r.hi = hi;
      return;
    }
  if (readers.empty()) state().served.read_pages.push_back(page);
  readers.push_back({rank, pushes, lo, hi});
}

}  // namespace

void serve_diff_request(int src, codec::Reader& r) {
  auto& s = state();
  auto req = r.get<std::uint32_t>();
  auto n = r.count(req & within ? 13 : 9);
  if (req & ~(at_collection | rereads | within)) throw codec::DecodeError("unknown diff request flags");
  if (n > max_request_items) throw codec::DecodeError("diff request of more than " + std::to_string(max_request_items) + " items");
  struct Item {
    std::uint32_t page, idx;
    std::uint8_t kind;  // asked as (item_*), then answered as (item_*, valid_copy, end_copy, whole_through)
    std::uint16_t lo = 0, hi = mem::page_size;  // the bytes the asking rank reads
    std::span<const std::byte> data;
    // Else encoded into the reply: the diff of `end` against `base` (the page against its
    // open twin, or a change kept as the page against zeros, Served::ends).
    const std::byte* base = nullptr;
    const std::byte* end = nullptr;
    std::uint32_t through = 0;  // of whole_through
  };
  std::vector<Item> items(n);
  for (auto& it : items) {
    it.page = r.get<std::uint32_t>();
    it.idx = r.get<std::uint32_t>();
    it.kind = r.get<std::uint8_t>();
    if (req & within) {
      it.lo = r.get<std::uint16_t>();
      it.hi = r.get<std::uint16_t>();
      if (it.lo >= it.hi || it.hi > mem::page_size) throw codec::DecodeError("diff request for bytes outside a page");
    }
    if (it.page >= s.heap.allocated) throw codec::DecodeError("diff request for a page outside the heap");
    if (it.kind > item_from_zeros) throw codec::DecodeError("diff request item of unknown kind");
  }
  r.expect_end();
  codec::Writer w;
  std::unique_lock lk(s.mu);
  if ((req & at_collection) && s.gc.collecting) {
    // Every rank knows every change during a collection, so a valid copy is the page's final
    // state: sent once in place of the diffs asked for, however many intervals wrote it.
    std::vector<Item> kept;
    for (const auto& it : items)
      if (!s.heap.pages[it.page].valid) kept.push_back(it);
      else if (kept.empty() || kept.back().page != it.page || kept.back().kind != valid_copy)
        kept.push_back({it.page, it.idx, valid_copy, 0, mem::page_size, {}});
    items = std::move(kept);
    n = std::uint32_t(items.size());
  }
  // The reply is sized before it is written: grown step by step, a reply of megabytes
  // (a rank's first fetch of its block) would be copied and faulted in several times over.
  std::size_t size = 12;
  for (auto& it : items) {
    auto& pg = s.heap.pages[it.page];
    if (it.kind == item_whole) {
      // The page as that interval left it: a later interval's writes are not the
      // requester's to see yet. Without a kept image, a twin of a later interval is the
      // page before that interval's writes, which the live page may already hold (a write
      // outside the loops that every rank makes): the requester would apply the diffs since
      // the whole page over them, bytes of two values in one word.
      const std::byte* bytes = image_before(it.page, it.idx);
      if (!bytes && pg.twin && pg.twin_idx > it.idx) bytes = pg.twin.get();
      it.data = bytes ? std::span(bytes, mem::page_size) : pg.held ? show_held(it.page) : std::span(alias_page(it.page), mem::page_size);
      // Waiting in a barrier, this rank has closed its interval and changes nothing: the
      // page is as that interval left it (a held page, or one whose hold just ended, is
      // announced whole by it).
      const std::uint32_t known = s.intervals.log.known(std::uint32_t(s.me));
      if (!bytes && s.sync.pages_as_closed && known > it.idx + 1) {
        it.kind = whole_through;
        it.through = known - 1;
      }
    } else if (it.kind == valid_copy) {
      it.data = std::span(alias_page(it.page), mem::page_size);
    } else if (pg.twin && pg.twin_idx == it.idx) {
      // The page still holds that interval's end (its next write or invalidation turns the
      // twin into a stored change first): encoded straight into the reply, not stored, as a
      // rank's first fetch of a block it did not initialize would store megabytes of diffs.
      it.base = pg.twin.get();
      it.end = alias_page(it.page);
    } else if (const OwnChange c = own_change(it.page, it.idx); c.diff) {
      it.data = *c.diff;
    } else if (c.end) {
      it.base = zero_page;
      it.end = c.end;
    } else {
      fatal("rank %d asked for a change of page %u (interval %u) that this rank never made", src, it.page, it.idx);
    }
    if (it.kind == item_from_zeros && it.base == zero_page) {
      // Asked by a rank whose copy is all zero, of a change made from zeros: the interval's
      // end itself is what the diff would make of that copy, and costs no encoding.
      it.kind = end_copy;
      it.data = std::span(it.end, mem::page_size);
      it.base = nullptr;
    } else if (it.kind == item_from_zeros) {
      it.kind = item_diff;
    }
    size += 17 + (it.base ? max_page_diff : it.data.size());
  }
  // A collection brings every page up to date, wanted or not: no reader shows interest there.
  const std::uint32_t pushes = (req & at_collection)            ? 0
                               : items.size() <= max_halo_pages ? push_barriers
                               : (req & rereads)                ? reread_pushes
                                                                : 0;
  mem::reserve_populated(w.buffer(), size);
  w.put<std::uint32_t>(std::uint32_t(s.me));
  w.put(req);
  w.put(n);
  for (const auto& it : items) {
    w.put(it.page);
    w.put(it.idx);
    w.put(it.kind);
    if (it.kind == whole_through) w.put(it.through);
    if (pushes) register_reader(it.page, std::uint32_t(src), pushes, it.lo, it.hi);
    if (it.base) {
      put_diff(w, it.base, it.end);
      continue;
    }
    w.bytes(it.data);
    if (it.kind != item_diff) stats::counters().whole_pages_sent.fetch_add(1, std::memory_order_relaxed);
  }
  lk.unlock();
  s.net->send_owned(src, diff_reply, w.take());
}

void expect_reader(std::uint32_t first, std::uint32_t last, std::uint32_t rank) {
  if (last <= first || last - first > max_halo_pages) return;
  for (std::uint32_t page = first; page < last; ++page) {
    auto& readers = state().heap.pages[page].readers;
    const auto known = std::find_if(readers.begin(), readers.end(), [&](const Page::Reader& r) { return r.rank == rank; });
    // A known reader's bytes stay those it fetched or promised.
    if (known != readers.end()) known->left = std::max(known->left, 1u);
    else register_reader(page, rank, 1, 0, mem::page_size);
  }
}

std::vector<DirectMessage> encode_pushes(codec::Writer& w, const Interval* newest, int hub, std::uint64_t epoch) {
  auto& s = state();
  struct Out {
    std::uint32_t reader, page;
    bool whole;
    std::uint16_t lo, hi;  // of a whole page, the bytes its reader reads
  };
  std::vector<Out> out;
  if (newest)
    for (std::uint32_t page : s.served.read_pages) {
      const std::optional<bool> whole = written(*newest, page);
      if (!whole) continue;
      auto& pg = s.heap.pages[page];
      // The change is stored now rather than at the page's next write: the push carries it.
      if (!*whole && !own_change(page, newest->idx).stored()) {
        if (!pg.twin || pg.twin_idx != newest->idx) continue;
        encode_twin(page);
      }
      for (auto& r : pg.readers) out.push_back({r.rank, page, *whole, r.lo, r.hi});
      for (auto& r : pg.readers) --r.left;
      std::erase_if(pg.readers, [](const Page::Reader& r) { return r.left == 0; });
    }
  std::erase_if(s.served.read_pages, [&](std::uint32_t page) { return s.heap.pages[page].readers.empty(); });
  // Readers other than the hub with direct_push_pages or more (relayed_push_pages where the
  // hub is another rank) get theirs in a message of their own; the rest ride in the arrival.
  std::map<std::uint32_t, std::size_t> per_reader;
  for (const Out& o : out) ++per_reader[o.reader];
  const std::uint32_t least = hub == s.me ? s.sync.direct_push_pages : s.sync.relayed_push_pages;
  std::vector<DirectMessage> direct;
  for (auto [reader, count] : per_reader)
    if (reader != std::uint32_t(hub) && count >= least) {
      direct.push_back({reader, {}});
      direct.back().w.put(epoch);
      direct.back().w.reserve(count * (mem::page_size + 64));
      direct.back().w.put<std::uint32_t>(std::uint32_t(count));
    }
  const auto writer_for = [&](std::uint32_t reader) -> codec::Writer& {
    for (auto& d : direct)
      if (d.reader == reader) return d.w;
    return w;
  };
  std::size_t in_band = out.size();
  for (const auto& d : direct) in_band -= per_reader[d.reader];
  // A page or its diff each, with its head (a diff larger than its page is rare).
  w.reserve(in_band * (mem::page_size + 64));
  w.put<std::uint32_t>(std::uint32_t(in_band));
  std::uint64_t parts = 0;
  for (const Out& o : out) {
    Push p{o.reader, std::uint32_t(s.me), newest->idx, o.page, o.whole, {}, o.lo};
    if (o.whole) p.data = std::span(alias_page(o.page) + o.lo, o.hi - o.lo);
    parts += p.part();
    codec::Writer& to = writer_for(o.reader);
    put_push_head(to, p);
    if (o.whole) to.bytes(p.data);
    else put_change(to, own_change(o.page, newest->idx));
  }
  stats::counters().pages_pushed.fetch_add(out.size(), std::memory_order_relaxed);
  stats::counters().pages_pushed_in_part.fetch_add(parts, std::memory_order_relaxed);
  stats::counters().pages_pushed_direct.fetch_add(out.size() - in_band, std::memory_order_relaxed);
  return direct;
}

}  // namespace dsm::proto
