#pragma once
/// \file
/// The reference model zoo: real architectures written against the public API, on which every
/// capability is verified (they mirror bench/fx/models.py and torchvision where named
/// alike, with the same parameter counts). Models are created in eval mode with weights drawn
/// from the thread's default generator.
///
/// ```
/// auto model = symtrace::zoo::create("resnet50");
/// model->num_parameters();  // 25'557'032
/// ```

#include "symtrace/core/dtype.hpp"
#include "symtrace/core/random.hpp"
#include "symtrace/core/tensor.hpp"
#include "symtrace/nn/module.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <source_location>
#include <string>
#include <string_view>
#include <vector>

namespace symtrace::zoo {

/// One example input of a zoo model.
struct ExampleInput {
  std::string name;  ///< the model's declared input name
  DType dtype = DType::float32;
  IntList shape;          ///< e.g. {1, 3, 224, 224}
  std::int64_t high = 0;  ///< int64 inputs are drawn from [0, high) (token ids)
};

/// A zoo entry.
struct ModelInfo {
  std::string name;
  std::string description;           ///< one line, for `symtrace zoo`
  std::vector<ExampleInput> inputs;  ///< the default example inputs
  /// Paths of the modules that cannot be traced on their own (empty for clean models): their
  /// forward reads tensor data, e.g. {"layer3.0"} for resnet50_fail1, or they cannot be called
  /// at all (a ModuleList the parent only indexes).
  std::vector<std::string> untraceable;
  /// The model's num_parameters(), known without building it (building vit_b16 draws 86M
  /// random weights); the zoo tests check it against every built model.
  std::int64_t parameters = 0;
  std::function<std::shared_ptr<Module>()> create;
};

/// Every model, in a fixed order (families together).
[[nodiscard]] const std::vector<ModelInfo>& models();
/// The model names, in the order of models().
[[nodiscard]] std::vector<std::string> names();
/// The entry `name`; throws std::invalid_argument listing the names (and the closest one).
[[nodiscard]] const ModelInfo& info(std::string_view name,
                                    std::source_location where = std::source_location::current());
/// A new instance of the model `name` (eval mode); throws like info().
[[nodiscard]] std::shared_ptr<Module> create(std::string_view name,
                                             std::source_location where = std::source_location::current());
/// Random example inputs for `info` (normal floats, int64 ids in [0, high)), from `gen`.
[[nodiscard]] std::vector<Tensor> example_inputs(const ModelInfo& info, Generator& gen = default_generator());

namespace detail {
/// Each family file adds its entries (src/zoo/*.cpp).
void add_cnn_models(std::vector<ModelInfo>& out);
void add_sequence_models(std::vector<ModelInfo>& out);
}  // namespace detail

}  // namespace symtrace::zoo
