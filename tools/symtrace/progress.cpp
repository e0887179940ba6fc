// Progress: stage announcements on stderr once a job has taken more than a second.
#include "progress.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <ostream>

namespace symtrace::cli {

Progress::Progress(std::ostream& err, std::string what, std::chrono::milliseconds quiet)
    : err_(err), what_(std::move(what)) {
  watcher_ = std::thread([this, quiet] {
    std::unique_lock lock(mutex_);
    if (wake_.wait_for(lock, quiet, [this] { return done_; })) return;
    speaking_ = true;
    announce(lock);
  });
}

Progress::~Progress() {
  bool spoke = false;
  {
    std::unique_lock lock(mutex_);
    done_ = true;
    spoke = speaking_;
  }
  wake_.notify_all();
  watcher_.join();
  if (spoke) fmt::print(err_, "{}: done in {:.1f} s\n", what_, seconds());
}

void Progress::stage(std::string stage) {
  std::unique_lock lock(mutex_);
  stage_ = std::move(stage);
  announced_stage_ = false;
  if (speaking_) announce(lock);
}

bool Progress::speaking() {
  std::unique_lock lock(mutex_);
  return speaking_;
}

void Progress::announce(std::unique_lock<std::mutex>& /*lock*/) {
  if (announced_stage_ || stage_.empty()) return;
  announced_stage_ = true;
  fmt::print(err_, "{}: {} ({:.1f} s)\n", what_, stage_, seconds());
  err_.flush();
}

double Progress::seconds() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

}  // namespace symtrace::cli
