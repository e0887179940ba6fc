#pragma once
// A progress indication for long jobs: silent for the first second; after that, each stage
// is announced on `err` as it starts ("symtrace check vit_b16: running eagerly (1.4 s)"), and
// the total when the job ends.

#include <chrono>
#include <condition_variable>
#include <iosfwd>
#include <mutex>
#include <string>
#include <thread>

namespace symtrace::cli {

class Progress {
 public:
  /// `what` names the job in the messages ("symtrace check vit_b16"); stages are announced
  /// once `quiet` has passed.
  Progress(std::ostream& err, std::string what, std::chrono::milliseconds quiet = std::chrono::seconds(1));
  /// Announces the end (when anything was announced) and stops the watcher.
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  /// The job enters `stage` ("tracing", "running the graph").
  void stage(std::string stage);
  /// True once the quiet time has passed: stages are announced as they start.
  [[nodiscard]] bool speaking();

 private:
  void announce(std::unique_lock<std::mutex>& lock);
  [[nodiscard]] double seconds() const;

  std::ostream& err_;
  std::string what_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::mutex mutex_;
  std::condition_variable wake_;
  std::string stage_;
  bool announced_stage_ = false;  // the current stage was announced
  bool speaking_ = false;         // a second has passed: stages are announced
  bool done_ = false;
  std::thread watcher_;
};

}  // namespace symtrace::cli
