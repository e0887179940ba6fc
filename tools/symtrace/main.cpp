// The symtrace program: see cli.hpp and `symtrace --help`.
#include "cli.hpp"

#include <iostream>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  return symtrace::cli::run(args, std::cout, std::cerr);
}
