// The callback registry behind RecordFunction.
//
// Global callbacks live in an immutable list that add/remove replace as a whole, so an event
// takes a reference to a consistent list and keeps the callbacks it started with even if they
// are removed meanwhile. The mutex guards only the pointer to the list: an event holds it for
// one shared_ptr copy. (std::atomic<std::shared_ptr> would do the same without naming a mutex,
// but libstdc++ 12's load() releases its internal lock with a relaxed store, so its read of the
// pointer is not ordered before the next store's write: a data race that ThreadSanitizer
// reports.) Each
// thread's own callbacks are a plain thread_local list. g_observer_count counts both kinds
// across all threads (Note [Observers off] in the header): when it is zero an event does no
// more than read it.
#include "symtrace/ops/record_function.hpp"

#include "symtrace/core/detail/save_and_restore.hpp"
#include "symtrace/core/error.hpp"
#include "symtrace/ops/op.hpp"

#include <algorithm>
#include <exception>
#include <mutex>
#include <random>
#include <utility>

namespace symtrace {

namespace detail {
/// A registered callback. (Not in the anonymous namespace: ThreadLocalState's captured state,
/// a type of the public header, holds a list of them.)
struct CallbackEntry {
  CallbackHandle handle = 0;
  std::shared_ptr<const RecordFunctionCallback> callback;
  std::shared_ptr<std::atomic<bool>> enabled;
};
}  // namespace detail

namespace {

using Entry = detail::CallbackEntry;
using EntryList = std::vector<Entry>;

std::atomic<CallbackHandle> g_next_handle{1};
std::atomic<std::uint64_t> g_next_event_id{1};
std::mutex g_global_mutex;  // guards g_global (the pointer, not the list: lists are immutable)
std::shared_ptr<const EntryList> g_global = std::make_shared<const EntryList>();

/// The current global callbacks.
std::shared_ptr<const EntryList> global_callbacks() {
  const std::lock_guard lock(g_global_mutex);
  return g_global;
}

/// This thread's callbacks; on thread exit they stop counting.
struct ThreadLocalCallbacks {
  EntryList entries;
  ~ThreadLocalCallbacks() {
    detail::g_observer_count.fetch_sub(static_cast<std::uint32_t>(entries.size()), std::memory_order_relaxed);
  }
};
thread_local ThreadLocalCallbacks t_callbacks;
// The innermost event with an id on this thread (or the one a ThreadLocalStateGuard carried
// in), and the thread it ran on.
thread_local std::uint64_t t_current_event = 0;
thread_local std::uint64_t t_current_event_thread = 0;
thread_local std::uint64_t t_sequence_nr = 0;  // events with ids on this thread so far
thread_local std::uint64_t t_thread_id = 0;    // 0 until asked
std::atomic<std::uint64_t> g_next_thread_id{1};
thread_local std::mt19937_64 t_sampler{0x5eed5eedULL};

// The switches (RecordFunctionGuard and the global one). Read only once some callback is
// registered (Note [Observers off]), so they cost nothing otherwise.
thread_local bool t_enabled = true;
std::atomic<bool> g_enabled{true};

// Note [No observing observers]: while a callback runs on a thread, events on that thread (ops
// the callback itself runs) are not observed, so a callback that computes with the event's
// tensors does not observe itself without end.
thread_local bool t_in_callback = false;
/// Marks this thread as running a callback for the scope's lifetime.
struct InCallback : detail::SaveAndRestore<bool> {
  InCallback() noexcept : SaveAndRestore(t_in_callback, true) {}
};

bool sampled(double probability) {
  if (probability >= 1.0) return true;
  if (probability <= 0.0) return false;
  return static_cast<double>(t_sampler() >> 11) * 0x1.0p-53 < probability;
}

Entry make_entry(RecordFunctionCallback callback) {
  return Entry{g_next_handle.fetch_add(1, std::memory_order_relaxed),
               std::make_shared<const RecordFunctionCallback>(std::move(callback)),
               std::make_shared<std::atomic<bool>>(true)};
}

/// The entry `handle` names among the global callbacks or this thread's, or nullptr.
std::shared_ptr<std::atomic<bool>> find_enabled_flag(CallbackHandle handle) {
  for (const Entry& e : t_callbacks.entries) {
    if (e.handle == handle) return e.enabled;
  }
  const std::shared_ptr<const EntryList> global = global_callbacks();
  for (const Entry& e : *global) {
    if (e.handle == handle) return e.enabled;
  }
  return nullptr;
}

}  // namespace

std::string_view to_string(RecordScope scope) noexcept {
  switch (scope) {
    case RecordScope::function: return "function";
    case RecordScope::module: return "module";
    case RecordScope::user_scope: return "user_scope";
    case RecordScope::torchscript_function: return "torchscript_function";
    case RecordScope::custom_class: return "custom_class";
  }
  return "unknown scope";
}

// ---- RecordFunctionCallback -------------------------------------------------------------------

RecordFunctionCallback::RecordFunctionCallback(StartFn start, EndFn end, std::source_location where)
    : start_(std::move(start)), end_(std::move(end)) {
  if (!start_ && !end_) {
    throw_invalid_argument(where, "a RecordFunctionCallback needs a start or an end function; both are empty");
  }
}

RecordFunctionCallback& RecordFunctionCallback::needs_inputs(bool needed) noexcept {
  needs_inputs_ = needed;
  return *this;
}

RecordFunctionCallback& RecordFunctionCallback::needs_outputs(bool needed) noexcept {
  needs_outputs_ = needed;
  return *this;
}

RecordFunctionCallback& RecordFunctionCallback::needs_ids(bool needed) noexcept {
  needs_ids_ = needed;
  return *this;
}

RecordFunctionCallback& RecordFunctionCallback::sampling_prob(double probability, std::source_location where) {
  if (!(probability >= 0.0 && probability <= 1.0)) {
    throw_invalid_argument(where, "sampling_prob({}) is not a probability: give a value in [0, 1]", probability);
  }
  probability_ = probability;
  return *this;
}

RecordFunctionCallback& RecordFunctionCallback::scopes(std::initializer_list<RecordScope> scopes,
                                                       std::source_location where) {
  if (scopes.size() == 0) {
    throw_invalid_argument(where, "scopes({{}}) would observe nothing: name at least one RecordScope "
                                  "(function, module, user_scope, torchscript_function, custom_class)");
  }
  std::uint8_t mask = 0;
  for (RecordScope s : scopes) mask = static_cast<std::uint8_t>(mask | (1U << static_cast<unsigned>(s)));
  scope_mask_ = mask;
  return *this;
}

RecordFunctionCallback& RecordFunctionCallback::should_run(ShouldRunFn predicate) noexcept {
  should_run_ = std::move(predicate);
  return *this;
}

// ---- Registry ---------------------------------------------------------------------------------

CallbackHandle add_global_callback(RecordFunctionCallback callback) {
  Entry entry = make_entry(std::move(callback));
  const CallbackHandle handle = entry.handle;
  std::shared_ptr<const EntryList> old;  // released after the lock, as in remove_callback
  std::lock_guard lock(g_global_mutex);
  auto next = std::make_shared<EntryList>(*g_global);
  next->push_back(std::move(entry));
  old = std::exchange(g_global, std::move(next));
  detail::g_observer_count.fetch_add(1, std::memory_order_relaxed);
  return handle;
}

CallbackHandle add_thread_local_callback(RecordFunctionCallback callback) {
  Entry entry = make_entry(std::move(callback));
  const CallbackHandle handle = entry.handle;
  t_callbacks.entries.push_back(std::move(entry));
  detail::g_observer_count.fetch_add(1, std::memory_order_relaxed);
  return handle;
}

bool remove_callback(CallbackHandle handle) {
  auto& local = t_callbacks.entries;
  auto it = std::find_if(local.begin(), local.end(), [&](const Entry& e) { return e.handle == handle; });
  if (it != local.end()) {
    const Entry removed = std::move(*it);  // its callback is destroyed last, after the list is consistent
    local.erase(it);
    detail::g_observer_count.fetch_sub(1, std::memory_order_relaxed);
    return true;
  }
  std::shared_ptr<const EntryList> old;  // released after the lock: callbacks' destructors may use the registry
  {
    std::lock_guard lock(g_global_mutex);
    old = g_global;
    auto found = std::find_if(old->begin(), old->end(), [&](const Entry& e) { return e.handle == handle; });
    if (found == old->end()) return false;
    auto next = std::make_shared<EntryList>();
    next->reserve(old->size() - 1);
    for (const Entry& e : *old) {
      if (e.handle != handle) next->push_back(e);
    }
    g_global = std::move(next);
    detail::g_observer_count.fetch_sub(1, std::memory_order_relaxed);
  }
  return true;
}

bool disable_callback(CallbackHandle handle) noexcept {
  if (auto flag = find_enabled_flag(handle)) {
    flag->store(false, std::memory_order_relaxed);
    return true;
  }
  return false;
}

bool enable_callback(CallbackHandle handle) noexcept {
  if (auto flag = find_enabled_flag(handle)) {
    flag->store(true, std::memory_order_relaxed);
    return true;
  }
  return false;
}

void clear_callbacks() {
  EntryList local = std::move(t_callbacks.entries);  // destroyed on return, after the registry is consistent
  t_callbacks.entries.clear();
  detail::g_observer_count.fetch_sub(static_cast<std::uint32_t>(local.size()), std::memory_order_relaxed);
  auto empty = std::make_shared<const EntryList>();
  std::shared_ptr<const EntryList> old;  // released after the lock, as in remove_callback
  std::lock_guard lock(g_global_mutex);
  old = std::exchange(g_global, std::move(empty));
  detail::g_observer_count.fetch_sub(static_cast<std::uint32_t>(old->size()), std::memory_order_relaxed);
}

void set_record_function_seed(std::uint64_t seed) noexcept { t_sampler.seed(seed); }

std::uint64_t record_function_thread_id() noexcept {
  if (t_thread_id == 0) t_thread_id = g_next_thread_id.fetch_add(1, std::memory_order_relaxed);
  return t_thread_id;
}

// ---- Switches and carried state ---------------------------------------------------------------

bool is_record_function_enabled() noexcept { return t_enabled && g_enabled.load(std::memory_order_relaxed); }

void enable_record_function(bool enabled) noexcept { t_enabled = enabled; }

void enable_record_function_globally(bool enabled) noexcept { g_enabled.store(enabled, std::memory_order_relaxed); }

RecordFunctionGuard::RecordFunctionGuard(bool enabled) noexcept : previous_(t_enabled) { t_enabled = enabled; }

RecordFunctionGuard::~RecordFunctionGuard() { t_enabled = previous_; }

GlobalRecordFunctionGuard::GlobalRecordFunctionGuard(bool enabled) noexcept
    : previous_(g_enabled.exchange(enabled, std::memory_order_relaxed)) {}

GlobalRecordFunctionGuard::~GlobalRecordFunctionGuard() { g_enabled.store(previous_, std::memory_order_relaxed); }

struct ThreadLocalState::Captured {
  EntryList callbacks;
  bool enabled = true;
  std::uint64_t event = 0;
  std::uint64_t event_thread = 0;
};

ThreadLocalState::ThreadLocalState()
    : captured_(std::make_shared<const Captured>(
          Captured{t_callbacks.entries, t_enabled, t_current_event, t_current_event_thread})) {}

struct ThreadLocalStateGuard::Saved {
  ThreadLocalState::Captured own;       // the thread's state before the guard
  std::vector<CallbackHandle> carried;  // the handles the guard brought in
};

ThreadLocalStateGuard::ThreadLocalStateGuard(const ThreadLocalState& state)
    : saved_(std::make_unique<Saved>(Saved{{{}, t_enabled, t_current_event, t_current_event_thread}, {}})) {
  const ThreadLocalState::Captured& c = *state.captured_;
  EntryList carried = c.callbacks;  // the steps that can throw: nothing is changed before them
  saved_->carried.reserve(carried.size());
  for (const Entry& e : carried) saved_->carried.push_back(e.handle);
  saved_->own.callbacks = std::exchange(t_callbacks.entries, std::move(carried));
  // The thread's count moves from its own callbacks to the carried ones (Note [Observers off]).
  detail::g_observer_count.fetch_add(static_cast<std::uint32_t>(t_callbacks.entries.size()), std::memory_order_relaxed);
  detail::g_observer_count.fetch_sub(static_cast<std::uint32_t>(saved_->own.callbacks.size()), std::memory_order_relaxed);
  t_enabled = c.enabled;
  t_current_event = c.event;
  t_current_event_thread = c.event_thread;
}

ThreadLocalStateGuard::~ThreadLocalStateGuard() {
  // The carried callbacks go; those added under the guard stay the thread's (the class comment).
  ThreadLocalState::Captured& own = saved_->own;
  EntryList here = std::exchange(t_callbacks.entries, std::move(own.callbacks));
  detail::g_observer_count.fetch_add(static_cast<std::uint32_t>(t_callbacks.entries.size()), std::memory_order_relaxed);
  detail::g_observer_count.fetch_sub(static_cast<std::uint32_t>(here.size()), std::memory_order_relaxed);
  for (Entry& e : here) {
    if (std::find(saved_->carried.begin(), saved_->carried.end(), e.handle) != saved_->carried.end()) continue;
    t_callbacks.entries.push_back(std::move(e));
    detail::g_observer_count.fetch_add(1, std::memory_order_relaxed);
  }
  t_enabled = own.enabled;
  t_current_event = own.event;
  t_current_event_thread = own.event_thread;
}

// ---- RecordFunctionRun ------------------------------------------------------------------------

RecordFunctionRun::RecordFunctionRun(RecordScope scope, std::string_view name, std::span<const Value> inputs,
                                     std::source_location where) {
  if (!has_callbacks() || t_in_callback || !t_enabled) return;  // Note [Observers off]; Note [No observing observers]
  fn_.name_ = name;
  fn_.scope_ = scope;
  fn_.where_ = where;
  start(inputs);
}

RecordFunctionRun::RecordFunctionRun(const OpCall& call) {
  if (!has_callbacks() || t_in_callback || !t_enabled) return;
  fn_.name_ = call.op.name();
  fn_.scope_ = RecordScope::function;
  fn_.where_ = call.where;
  fn_.op_call_ = &call;
  start(call.args);
}

RecordFunctionRun::RecordFunctionRun(const Module& module, std::string_view type_name, std::span<const Value> inputs,
                                     std::source_location where) {
  if (!has_callbacks() || t_in_callback || !t_enabled) return;
  fn_.name_ = type_name;
  fn_.scope_ = RecordScope::module;
  fn_.where_ = where;
  fn_.module_ = &module;
  start(inputs);
}

void RecordFunctionRun::start(std::span<const Value> inputs) {
  if (!g_enabled.load(std::memory_order_relaxed)) return;
  // The callbacks that apply, decided once: scope, enabled, sampled, then their predicate.
  std::vector<std::shared_ptr<const RecordFunctionCallback>> chosen;
  const auto consider = [&](const Entry& e) {
    if (e.callback->observes(fn_.scope_) && e.enabled->load(std::memory_order_relaxed) &&
        sampled(e.callback->probability())) {
      chosen.push_back(e.callback);
    }
  };
  const std::shared_ptr<const EntryList> global = global_callbacks();
  for (const Entry& e : *global) consider(e);
  for (const Entry& e : t_callbacks.entries) consider(e);
  if (chosen.empty()) return;
  // A predicate sees the inputs when its own callback asked for them.
  {
    const InCallback guard;
    std::erase_if(chosen, [&](const std::shared_ptr<const RecordFunctionCallback>& c) {
      if (!c->should_run_) return false;
      fn_.inputs_ = c->wants_inputs() ? inputs : std::span<const Value>();
      return !c->should_run_(fn_);
    });
  }
  fn_.inputs_ = {};
  if (chosen.empty()) return;

  bool wants_inputs = false;
  bool wants_ids = false;
  for (const auto& c : chosen) {
    wants_inputs = wants_inputs || c->wants_inputs();
    wants_ids = wants_ids || c->wants_ids();
    wants_outputs_ = wants_outputs_ || c->wants_outputs();
  }
  started_.reserve(chosen.size());  // before any state changes: no throw below until the starts
  if (wants_inputs) fn_.inputs_ = inputs;
  if (wants_ids) {
    fn_.id_ = g_next_event_id.fetch_add(1, std::memory_order_relaxed);
    fn_.parent_id_ = t_current_event;
    fn_.forward_thread_id_ = t_current_event_thread;
    fn_.thread_id_ = record_function_thread_id();
    fn_.sequence_nr_ = ++t_sequence_nr;
    previous_parent_ = t_current_event;
    previous_parent_thread_ = t_current_event_thread;
    t_current_event = fn_.id_;
    t_current_event_thread = fn_.thread_id_;
    pushed_id_ = true;
  }
  ended_ = false;
  uncaught_ = std::uncaught_exceptions();
  try {
    const InCallback guard;
    for (auto& c : chosen) {
      std::unique_ptr<ObserverContext> context = c->start_ ? c->start_(fn_) : nullptr;
      started_.push_back(Started{std::move(c), std::move(context)});  // capacity reserved: no throw
    }
  } catch (...) {
    // Pairs stay pairs: the callbacks that started see their end, then the start's error goes on.
    try {
      run_ends();
    } catch (...) {  // NOLINT(bugprone-empty-catch): the start's exception is the one reported
    }
    throw;
  }
}

void RecordFunctionRun::end(std::span<const Value> outputs) {
  if (ended_) return;
  if (wants_outputs_) fn_.outputs_ = outputs;
  run_ends();
}

void RecordFunctionRun::run_ends() noexcept(false) {
  ended_ = true;
  if (pushed_id_) {
    t_current_event = previous_parent_;
    t_current_event_thread = previous_parent_thread_;
    pushed_id_ = false;
  }
  // Every started callback gets its end even when an earlier end throws; the first error is
  // reported once all have run.
  std::exception_ptr first;
  const InCallback guard;
  for (Started& s : started_) {
    if (!s.callback->end_) continue;
    try {
      s.callback->end_(fn_, s.context.get());
    } catch (...) {
      if (!first) first = std::current_exception();
    }
  }
  started_.clear();
  if (first) std::rethrow_exception(first);
}

RecordFunctionRun::~RecordFunctionRun() noexcept(false) {
  if (ended_) return;
  if (std::uncaught_exceptions() > uncaught_) {
    // The event itself is failing: its exception is the one that propagates.
    try {
      run_ends();
    } catch (...) {  // NOLINT(bugprone-empty-catch)
    }
    return;
  }
  run_ends();
}

}  // namespace symtrace
