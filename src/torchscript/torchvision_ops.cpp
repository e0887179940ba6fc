#include "torchscript/torchvision_ops.hpp"

#include <fmt/format.h>

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <system_error>
#include <vector>

namespace symtrace::torchscript::detail {

namespace {

namespace fs = std::filesystem;

// Where Debian (dist-packages) and a Python built from source (site-packages) keep packages.
std::vector<fs::path> package_dirs() {
  std::vector<fs::path> dirs = {"/usr/lib/python3/dist-packages", "/usr/local/lib/python3/dist-packages"};
  for (const char* root : {"/usr/lib", "/usr/local/lib"}) {
    std::error_code ec;
    for (fs::directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
      const std::string name = it->path().filename().string();
      if (name.starts_with("python3.")) {
        dirs.push_back(it->path() / "dist-packages");
        dirs.push_back(it->path() / "site-packages");
      }
    }
  }
  return dirs;
}

// The torchvision/_C*.so files under `dir`, sorted (one per Python version).
std::vector<fs::path> candidates(const fs::path& dir) {
  std::vector<fs::path> found;
  std::error_code ec;
  for (fs::directory_iterator it(dir / "torchvision", ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.starts_with("_C") && name.ends_with(".so")) found.push_back(it->path());
  }
  std::sort(found.begin(), found.end());
  return found;
}

struct State {
  std::once_flag once;
  std::optional<std::string> loaded;
  std::string why_not;
};

State& state() {
  static State s;
  return s;
}

void load_once(State& s) {
  std::vector<fs::path> tried;
  if (const char* given = std::getenv("SYMTRACE_TORCHVISION_OPS"); given != nullptr && *given != '\0') {
    tried.emplace_back(given);
  } else {
    for (const fs::path& dir : package_dirs())
      for (fs::path& so : candidates(dir)) tried.push_back(std::move(so));
  }
  std::string errors;
  for (const fs::path& so : tried) {
    // RTLD_GLOBAL: the library's static initialisers register the ops with LibTorch's
    // dispatcher, which is already loaded; it stays loaded for the process.
    if (dlopen(so.c_str(), RTLD_NOW | RTLD_GLOBAL) != nullptr) {
      s.loaded = so.string();
      return;
    }
    const char* e = dlerror();
    errors += fmt::format("; {}: {}", so.string(), e != nullptr ? e : "did not load");
  }
  if (tried.empty())
    s.why_not = "torchvision's ops library (torchvision/_C*.so) was not found in Python's package directories: "
                "install Debian's python3-torchvision, or set SYMTRACE_TORCHVISION_OPS to the library's path";
  else
    s.why_not = fmt::format("torchvision's ops library did not load{}", errors);
}

}  // namespace

std::optional<std::string> load_torchvision_ops() {
  State& s = state();
  std::call_once(s.once, [&] { load_once(s); });
  return s.loaded;
}

std::string torchvision_ops_why_not() {
  State& s = state();
  std::call_once(s.once, [&] { load_once(s); });
  return s.loaded ? std::string() : s.why_not;
}

}  // namespace symtrace::torchscript::detail
