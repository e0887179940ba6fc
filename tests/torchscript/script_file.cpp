// Apart from the tests: LibTorch's headers define a CHECK macro of their own (glog's).
#include "torchscript/script_file.hpp"

#include <torch/script.h>

#include <fmt/format.h>

#include <system_error>
#include <unistd.h>

namespace symtrace::testing {

namespace {

const std::filesystem::path& scratch() {
  struct Folder {
    std::filesystem::path path =
        std::filesystem::temp_directory_path() / fmt::format("symtrace-script-files-{}", ::getpid());
    Folder() { std::filesystem::create_directories(path); }
    Folder(const Folder&) = delete;
    Folder& operator=(const Folder&) = delete;
    ~Folder() {
      std::error_code ignored;
      std::filesystem::remove_all(path, ignored);
    }
  };
  static const Folder folder;
  return folder.path;
}

}  // namespace

std::filesystem::path script_file(const std::string& name, const std::string& source) {
  torch::jit::Module m("Script");
  m.define(source + "\n");
  const std::filesystem::path path = scratch() / (name + ".pt");
  m.save(path.string());
  return path;
}

}  // namespace symtrace::testing
