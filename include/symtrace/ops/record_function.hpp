#pragma once
/// \file
/// Observers of eager execution: the C++ side of PyTorch's RecordFunction. A callback is a start
/// function and an end function that run around each observed event: an op whose kernel runs
/// on concrete tensors (scope `function`; ops recorded symbolically by a trace are not events),
/// a call of a module through `Module::call` (scope `module`, named by the module's type, eager
/// or while tracing), a call of a TorchScript function or method by a loaded file's code (scope
/// `torchscript_function`, named by its qualified name), a method of a class registered with
/// LibTorch (`custom_class`), or a user scope (`RecordScopeGuard`, `SYMTRACE_RECORD_USER_SCOPE`,
/// `SYMTRACE_RECORD_FUNCTION`). Callbacks are global (every thread) or thread-local (the
/// thread that added them), and are removed, enabled and disabled by the handle `add_*` returns.
///
/// Switches, as LibTorch's: `RecordFunctionGuard` / `DisableRecordFunctionGuard` turn every
/// callback off (and back on) on this thread for a scope, `GlobalRecordFunctionGuard` on every
/// thread. Work handed to another thread sees this thread's thread-local callbacks, switch and
/// current event only when carried: capture a `ThreadLocalState` here and hold a
/// `ThreadLocalStateGuard` of it in the worker (at::ThreadLocalState's pattern).
///
/// The registry sits below the op dispatcher and the module base so both can fire it: with no
/// callback registered anywhere an event costs one relaxed atomic load and a branch
/// (Note [Observers off]). Inputs and outputs are handed to callbacks only when one asked for
/// them, and event ids only when one asked for ids, so a callback that counts calls pays for
/// nothing else. Events a callback causes on its own thread (ops it runs on the event's
/// tensors) are not observed. Any registered callback, even another thread's or one for other
/// scopes, sends module calls through the boxed `Module::call` path.
///
///   auto handle = symtrace::add_global_callback(
///       symtrace::RecordFunctionCallback([](const symtrace::RecordFunction& fn) {
///         fmt::print("{}\n", fn.name());
///         return std::unique_ptr<symtrace::ObserverContext>();
///       }).scopes({symtrace::RecordScope::function}));
///   ...
///   symtrace::remove_callback(handle);

#include "symtrace/core/value.hpp"
#include "symtrace/core/thread_context.hpp"

#include <atomic>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <source_location>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace symtrace {

class Module;
struct OpCall;

/// What kind of event a RecordFunction is.
enum class RecordScope : std::uint8_t {
  function,              ///< an op's kernel
  module,                ///< a module call
  user_scope,            ///< RecordScopeGuard, SYMTRACE_RECORD_USER_SCOPE
  torchscript_function,  ///< a TorchScript function or method called by a file's code
  custom_class           ///< a method of a class registered with LibTorch (torch::class_)
};
inline constexpr std::size_t num_record_scopes = 5;
[[nodiscard]] std::string_view to_string(RecordScope scope) noexcept;

/// State a start callback hands to its end callback (derive from it).
struct ObserverContext {
  virtual ~ObserverContext() = default;
};

/// One observed event as callbacks see it. Made by the dispatcher, Module::call or a
/// RecordScopeGuard; callbacks only read it.
class RecordFunction {
 public:
  [[nodiscard]] std::string_view name() const noexcept { return name_; }
  [[nodiscard]] RecordScope scope() const noexcept { return scope_; }
  [[nodiscard]] std::source_location where() const noexcept { return where_; }
  /// The event's inputs when a callback running for it asked for inputs, else empty.
  [[nodiscard]] std::span<const Value> inputs() const noexcept { return inputs_; }
  /// The event's outputs (end callbacks only) when a callback running for it asked for
  /// outputs, else empty.
  [[nodiscard]] std::span<const Value> outputs() const noexcept { return outputs_; }
  /// Ids, when a callback running for the event asked for them (`needs_ids`), else 0.
  /// The event's handle: process-wide unique and increasing (LibTorch's `handle()`).
  [[nodiscard]] std::uint64_t id() const noexcept { return id_; }
  /// The id of the event this one runs inside (0 at top level): on this thread, or, in a
  /// worker holding a ThreadLocalStateGuard, the event current where the state was captured.
  [[nodiscard]] std::uint64_t parent_id() const noexcept { return parent_id_; }
  /// The event's number among this thread's events with ids: 1, 2, ... (LibTorch's `seqNr()`).
  [[nodiscard]] std::uint64_t sequence_nr() const noexcept { return sequence_nr_; }
  /// The id of the thread the event runs on (`record_function_thread_id()`).
  [[nodiscard]] std::uint64_t thread_id() const noexcept { return thread_id_; }
  /// The id of the thread the parent event ran on (0 at top level): this thread's for a nested
  /// event, the capturing thread's for an event in a worker that carried its state
  /// (LibTorch's `forwardThreadId()`).
  [[nodiscard]] std::uint64_t forward_thread_id() const noexcept { return forward_thread_id_; }
  /// The op call of a `function` event made by the dispatcher (op, complete arguments, call
  /// style), else nullptr.
  [[nodiscard]] const OpCall* op_call() const noexcept { return op_call_; }
  /// The module called by a `module` event, else nullptr.
  [[nodiscard]] const Module* module() const noexcept { return module_; }

 private:
  friend class RecordFunctionRun;
  const OpCall* op_call_ = nullptr;
  const Module* module_ = nullptr;
  std::string_view name_;
  RecordScope scope_ = RecordScope::function;
  std::source_location where_;
  std::span<const Value> inputs_;
  std::span<const Value> outputs_;
  std::uint64_t id_ = 0;
  std::uint64_t parent_id_ = 0;
  std::uint64_t sequence_nr_ = 0;
  std::uint64_t thread_id_ = 0;
  std::uint64_t forward_thread_id_ = 0;
};

/// A callback: start and end functions and when they run. Start and end always run as a
/// pair: an end runs exactly for the events whose start ran (sampling and the should-run
/// predicate are decided once, at the start).
class RecordFunctionCallback {
 public:
  using StartFn = std::function<std::unique_ptr<ObserverContext>(const RecordFunction&)>;
  using EndFn = std::function<void(const RecordFunction&, ObserverContext*)>;
  using ShouldRunFn = std::function<bool(const RecordFunction&)>;

  /// `start` runs before the event and may return a context, which `end` gets after it.
  /// Either may be empty. Throws std::invalid_argument when both are.
  explicit RecordFunctionCallback(StartFn start, EndFn end = nullptr,
                                  std::source_location where = std::source_location::current());

  /// Inputs are passed to the callbacks only when asked.
  RecordFunctionCallback& needs_inputs(bool needed = true) noexcept;
  RecordFunctionCallback& needs_outputs(bool needed = true) noexcept;
  RecordFunctionCallback& needs_ids(bool needed = true) noexcept;
  /// Runs for a random share `probability` of the events (in [0, 1]; std::invalid_argument
  /// otherwise). Sampling draws from a per-thread generator: seed it with
  /// `set_record_function_seed` for repeatable runs.
  RecordFunctionCallback& sampling_prob(double probability,
                                        std::source_location where = std::source_location::current());
  /// Runs only for events of these scopes (all scopes by default). An empty list is an error.
  RecordFunctionCallback& scopes(std::initializer_list<RecordScope> scopes,
                                 std::source_location where = std::source_location::current());
  /// Runs only when `predicate` returns true for the event (asked once per event, before start).
  RecordFunctionCallback& should_run(ShouldRunFn predicate) noexcept;

  [[nodiscard]] bool wants_inputs() const noexcept { return needs_inputs_; }
  [[nodiscard]] bool wants_outputs() const noexcept { return needs_outputs_; }
  [[nodiscard]] bool wants_ids() const noexcept { return needs_ids_; }
  [[nodiscard]] double probability() const noexcept { return probability_; }
  [[nodiscard]] bool observes(RecordScope scope) const noexcept {
    return (scope_mask_ >> static_cast<unsigned>(scope)) & 1U;
  }

 private:
  friend class RecordFunctionRun;
  StartFn start_;
  EndFn end_;
  ShouldRunFn should_run_;
  double probability_ = 1.0;
  std::uint8_t scope_mask_ = (1U << num_record_scopes) - 1;
  bool needs_inputs_ = false;
  bool needs_outputs_ = false;
  bool needs_ids_ = false;
};

/// Names a registered callback; 0 is never given out.
using CallbackHandle = std::uint64_t;

/// Adds a callback that runs on every thread. Safe while other threads run ops: an event that
/// has started keeps the callbacks it started with.
CallbackHandle add_global_callback(RecordFunctionCallback callback);
/// Adds a callback that runs on this thread only.
CallbackHandle add_thread_local_callback(RecordFunctionCallback callback);
/// Removes a callback (a thread-local one from the thread that added it). Returns false for a
/// handle that names no callback. An event already started still runs the removed callback's end.
bool remove_callback(CallbackHandle handle);
/// Turns a callback off and on again without removing it. Return false for an unknown handle.
bool disable_callback(CallbackHandle handle) noexcept;
bool enable_callback(CallbackHandle handle) noexcept;
/// Removes every global callback and this thread's thread-local ones.
void clear_callbacks();
/// Seeds this thread's sampling generator.
void set_record_function_seed(std::uint64_t seed) noexcept;
/// This thread's id as events report it: 1 for the first thread that asks, 2 for the next, ...
/// (LibTorch's `RecordFunction::currentThreadId()`).
[[nodiscard]] std::uint64_t record_function_thread_id() noexcept;

/// Whether callbacks run for events on this thread: its own switch and the global one are both
/// on (the default).
[[nodiscard]] bool is_record_function_enabled() noexcept;
/// Turns every callback off or on for this thread's events (`at::enableRecordFunction`).
void enable_record_function(bool enabled) noexcept;
/// Turns every callback off or on for every thread's events.
void enable_record_function_globally(bool enabled) noexcept;

/// Sets this thread's switch for the scope's lifetime and puts the previous one back after it,
/// also when an exception passes (`at::RecordFunctionGuard`).
class RecordFunctionGuard {
 public:
  explicit RecordFunctionGuard(bool enabled = true) noexcept;
  RecordFunctionGuard(const RecordFunctionGuard&) = delete;
  RecordFunctionGuard& operator=(const RecordFunctionGuard&) = delete;
  ~RecordFunctionGuard();

 private:
  bool previous_;
};

/// Turns every callback off on this thread for the scope's lifetime (`at::DisableRecordFunctionGuard`).
class DisableRecordFunctionGuard : public RecordFunctionGuard {
 public:
  DisableRecordFunctionGuard() noexcept : RecordFunctionGuard(false) {}
};

/// Sets the global switch for the scope's lifetime and puts the previous value back after it.
/// Guards of the global switch on several threads at once restore in whatever order they end:
/// take it on one thread.
class GlobalRecordFunctionGuard {
 public:
  explicit GlobalRecordFunctionGuard(bool enabled) noexcept;
  GlobalRecordFunctionGuard(const GlobalRecordFunctionGuard&) = delete;
  GlobalRecordFunctionGuard& operator=(const GlobalRecordFunctionGuard&) = delete;
  ~GlobalRecordFunctionGuard();

 private:
  bool previous_;
};

/// What observing on this thread depends on, captured to apply on another thread: this
/// thread's callbacks (thread-local ones), its switch, and its current event (the parent of
/// events in the worker). `at::ThreadLocalState`'s part for RecordFunction. Cheap to copy.
class ThreadLocalState {
 public:
  /// Captures the calling thread's state.
  ThreadLocalState();

 private:
  friend class ThreadLocalStateGuard;
  struct Captured;
  std::shared_ptr<const Captured> captured_;
};

/// Applies a captured ThreadLocalState on this thread for the scope's lifetime: its callbacks
/// replace this thread's own (which come back after), its switch is this thread's, and its
/// current event is the parent of the events made here. Made and destroyed on one thread;
/// guards nest. A callback added in the scope belongs to the thread, and stays after it.
class ThreadLocalStateGuard {
 public:
  explicit ThreadLocalStateGuard(const ThreadLocalState& state);
  ThreadLocalStateGuard(const ThreadLocalStateGuard&) = delete;
  ThreadLocalStateGuard& operator=(const ThreadLocalStateGuard&) = delete;
  ~ThreadLocalStateGuard();

 private:
  struct Saved;
  std::unique_ptr<Saved> saved_;
};

/// One observed event in flight: runs the start callbacks that apply when made (nothing at all
/// when no callback is registered), and their end callbacks at `end()` or, if that was not
/// called, at destruction. Made by the dispatcher and Module::call; RecordScopeGuard is the
/// user's form. When a start callback throws, the ends of the callbacks started before it run
/// and the exception propagates. An end callback's exception propagates from `end()` or from
/// the destructor, except while the stack unwinds for another exception: then the event's own
/// exception is the one that propagates.
class RecordFunctionRun {
 public:
  RecordFunctionRun(RecordScope scope, std::string_view name, std::span<const Value> inputs,
                    std::source_location where);
  /// A `function` event for `call` (callbacks can read the op and its call style).
  explicit RecordFunctionRun(const OpCall& call);
  /// A `module` event for a call of `module`, named by its type.
  RecordFunctionRun(const Module& module, std::string_view type_name, std::span<const Value> inputs,
                    std::source_location where);
  RecordFunctionRun(const RecordFunctionRun&) = delete;
  RecordFunctionRun& operator=(const RecordFunctionRun&) = delete;
  ~RecordFunctionRun() noexcept(false);

  /// Whether any callback started for this event.
  [[nodiscard]] bool active() const noexcept { return !started_.empty(); }
  /// Whether a started callback asked for outputs.
  [[nodiscard]] bool wants_outputs() const noexcept { return wants_outputs_; }
  /// Runs the end callbacks with the event's outputs (pass them only if wants_outputs()).
  void end(std::span<const Value> outputs = {});

 private:
  struct Started {
    std::shared_ptr<const RecordFunctionCallback> callback;
    std::unique_ptr<ObserverContext> context;
  };
  void start(std::span<const Value> inputs);
  void run_ends() noexcept(false);

  RecordFunction fn_;
  std::vector<Started> started_;
  std::uint64_t previous_parent_ = 0;
  std::uint64_t previous_parent_thread_ = 0;
  int uncaught_ = 0;
  bool wants_outputs_ = false;
  bool ended_ = true;
  bool pushed_id_ = false;
};

/// Marks an event (a user scope by default) from construction to destruction. It keeps its own
/// copy of the name and inputs (when a callback is registered), so temporaries may be passed.
class RecordScopeGuard {
 public:
  explicit RecordScopeGuard(std::string_view name, std::span<const Value> inputs = {},
                            RecordScope scope = RecordScope::user_scope,
                            std::source_location where = std::source_location::current())
      : name_(has_callbacks() ? name : std::string_view()),
        inputs_(has_callbacks() ? ValueList(inputs.begin(), inputs.end()) : ValueList()),
        run_(scope, name_, inputs_, where) {}
  RecordScopeGuard(const RecordScopeGuard&) = delete;
  RecordScopeGuard& operator=(const RecordScopeGuard&) = delete;
  ~RecordScopeGuard() noexcept(false) = default;

 private:
  std::string name_;
  ValueList inputs_;
  RecordFunctionRun run_;  // last: it reads the two above
};

}  // namespace symtrace

#define SYMTRACE_RECORD_CONCAT_INNER(a, b) a##b
#define SYMTRACE_RECORD_CONCAT(a, b) SYMTRACE_RECORD_CONCAT_INNER(a, b)
/// Records the rest of the enclosing block as an event of `scope` named `name`, with `inputs` (a
/// `std::span<const Value>`, or `{}`) handed to callbacks that ask for them
/// (RECORD_FUNCTION_WITH_SCOPE's form).
#define SYMTRACE_RECORD_WITH_SCOPE(scope, name, inputs)                                                     \
  const ::symtrace::RecordScopeGuard SYMTRACE_RECORD_CONCAT(symtrace_record_scope_, __LINE__)(name, inputs, \
                                                                                              scope)
/// Records the rest of the enclosing block as the user scope `name` (RECORD_USER_SCOPE's form).
#define SYMTRACE_RECORD_USER_SCOPE(name) \
  SYMTRACE_RECORD_WITH_SCOPE(::symtrace::RecordScope::user_scope, name, {})
/// Records the rest of the enclosing block as a `function` event (RECORD_FUNCTION's form): a
/// hand-written kernel observed as symtrace's own ops are.
#define SYMTRACE_RECORD_FUNCTION(name, inputs) SYMTRACE_RECORD_WITH_SCOPE(::symtrace::RecordScope::function, name, inputs)
/// Records the rest of the enclosing block as a `torchscript_function` event
/// (RECORD_TORCHSCRIPT_FUNCTION's form).
#define SYMTRACE_RECORD_TORCHSCRIPT_FUNCTION(name, inputs) \
  SYMTRACE_RECORD_WITH_SCOPE(::symtrace::RecordScope::torchscript_function, name, inputs)
