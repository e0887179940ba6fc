// Checkpoints: an undo log of primitive changes (graph_impl.hpp, namespace undo) recorded
// while at least one checkpoint is open, replayed backwards on rollback. Every record is the
// exact inverse of one change, so after rollback the graph is exactly what it was: same
// nodes, order, arguments, users in the same order, names and name counters, metadata. With
// no checkpoint open nothing is recorded.
//
// Note [Rollback cannot fail]: rollback runs in destructors and after an exception, so it is
// noexcept and allocates nothing: a record holds everything its undo puts back (a run of
// uses keeps a copy of the uses it replaced), removing uses erases in place, and the lists it
// refills held as much before, so their capacity suffices.
#include "graph_impl.hpp"

#include "symtrace/core/error.hpp"

#include <algorithm>
#include <iterator>

namespace symtrace::detail {

std::uint64_t GraphImpl::open_checkpoint() {
  std::uint64_t serial = next_serial_++;
  checkpoints_.push_back(CheckpointRecord{serial, log_.size(), num_slots(), constants.size(), subgraphs.size(), size_guards.size(),
                                          arena_.mark(), point_mode_, point_anchor_});
  return serial;
}

// Checkpoints are found from the innermost out: a robust trace of a chain of n modules nests n
// of them, and commits and rolls back the innermost one (a search from the outermost made that
// O(n^2)).
namespace {
template <typename Records>
auto find_checkpoint(Records& records, std::uint64_t serial) noexcept {
  auto it = std::find_if(records.rbegin(), records.rend(), [&](const auto& r) { return r.serial == serial; });
  return it == records.rend() ? records.end() : std::prev(it.base());
}
}  // namespace

bool GraphImpl::is_open(std::uint64_t serial) const noexcept {
  return find_checkpoint(checkpoints_, serial) != checkpoints_.end();
}

void GraphImpl::commit(std::uint64_t serial) noexcept {
  auto it = find_checkpoint(checkpoints_, serial);
  if (it == checkpoints_.end()) return;
  checkpoints_.erase(it, checkpoints_.end());                        // inner checkpoints are kept along with it
  if (checkpoints_.empty()) std::vector<undo::Record>().swap(log_);  // nobody can roll back any more
}

void GraphImpl::rollback(std::uint64_t serial) noexcept {
  auto it = find_checkpoint(checkpoints_, serial);
  if (it == checkpoints_.end()) return;
  CheckpointRecord record = *it;
  while (log_.size() > record.log_size) {
    undo(log_.back());
    log_.pop_back();
  }
  arena_.release(record.arena);
  constants.erase(constants.begin() + static_cast<std::ptrdiff_t>(record.num_constants), constants.end());
  subgraphs.erase(subgraphs.begin() + static_cast<std::ptrdiff_t>(record.num_subgraphs), subgraphs.end());
  while (size_guards.size() > record.num_size_guards) {  // erasing from a hash set does not allocate
    size_guard_keys.erase(size_guard_key(size_guards.back().fact));
    size_guards.pop_back();
  }
  point_mode_ = record.point_mode;
  point_anchor_ = record.point_anchor;
  checkpoints_.erase(it, checkpoints_.end());
  if (checkpoints_.empty()) std::vector<undo::Record>().swap(log_);
}

void GraphImpl::undo(undo::Record& record) noexcept {
  boost::variant2::visit(
      overloaded{
          [&](undo::Created& r) {
            Node& node = slot(r.id);
            SYMTRACE_ASSERT(r.id.value + 1 == num_slots(), "rollback out of order");
            remove_uses(node);
            unlink(node);
            if (output == r.id) output = NodeId();
            --live_count;
            names_.release(r.name);
            slots_.pop_back();  // with its uses, if any were left
          },
          [&](undo::Erased& r) {
            Node& node = slot(r.id);
            link_after(node, r.prev);
            node.flags_ = static_cast<std::uint8_t>(node.flags_ | Node::live);
            if (node.op_ == OpKind::output) output = r.id;
            ++live_count;
          },
          [&](undo::ArgsChanged& r) {
            // A node that had keyword arguments has its cold part, and keeps it while a
            // checkpoint is open (only an unlogged erase frees it): nothing to allocate.
            Node& node = slot(r.id);
            node.args_ = std::move(r.args);
            if (node.cold_) node.cold_->kwargs = std::move(r.kwargs);
          },
          [&](undo::RunChanged& r) { undo_run(r); },
          [&](undo::Moved& r) {
            Node& node = slot(r.id);
            unlink(node);
            link_after(node, r.prev);
          },
          [&](undo::MetaChanged& r) {
            Node& node = slot(r.id);
            node.tensor_meta_ = r.tensor_meta;
            node.scope_ = r.scope;
            node.where_ = r.where;
            node.flags_ = r.flags;
          },
          [&](undo::EntriesChanged& r) { slot(r.id).cold_->entries = std::move(r.entries); },
      },
      record);
}

}  // namespace symtrace::detail
