#pragma once
/// \file
/// `OpDef`: one op of the registry — schema, meta function, eager CPU kernel, properties —
/// and `OpCall`, the view of one call that meta functions, kernels and tracers receive.
///
/// Note [Meta before kernel]: an eager call runs the meta function first, so argument
/// checking (shapes, dims, dtypes) lives in one place and the symbolic path, which runs only
/// the meta function, reports exactly the errors the eager path would.

#include "symtrace/core/error.hpp"
#include "symtrace/core/value.hpp"
#include "symtrace/ops/schema.hpp"

#include "symtrace/core/detail/small_vector.hpp"

#include <cstdint>
#include <limits>
#include <memory>
#include <source_location>
#include <span>
#include <string_view>
#include <string>
#include <vector>

namespace symtrace {

/// How an op was called: as a free function (`relu(x)`) or a Tensor method (`x.relu()`).
/// A trace records call_function or call_method accordingly.
enum class CallStyle : std::uint8_t {
  function,
  method
};

/// Declared properties of an op (a bit set).
enum class OpFlags : std::uint32_t {
  none = 0,
  inplace = 1u << 0,            ///< mutates its first argument and returns it
  view = 1u << 1,               ///< its output shares storage with its first argument
  random = 1u << 2,             ///< draws from a Generator (e.g. dropout in training)
  elementwise = 1u << 3,        ///< output element i depends only on input elements i (after broadcasting)
  reduction = 1u << 4,          ///< reduces over dims
  mutates_arguments = 1u << 5,  ///< may write to arguments other than the first (batch_norm's
                                ///< running statistics in training): never removable as dead code
  // Channel behaviour, read by the channel-dependency analysis (analysis/channel_groups.hpp).
  // An op with none of these (nor elementwise or reduction) is a boundary there: channels
  // cannot be followed through it (matmul, softmax, embedding, ...).
  /// Output channel c depends on input channel c of its first argument only, and the output
  /// keeps the first argument's dims, aligned from the end (pooling, batch_norm, layer_norm,
  /// dropout, expand). Its other tensor arguments of one dim, as long as the channels, are
  /// per-channel tensors (batch_norm's weight, bias and running statistics).
  channel_passthrough = 1u << 6,
  /// Mixes channels through a weight (argument `weight`): weight dim 0 indexes the output
  /// channels, dim 1 the input channels of one group (argument `groups`, 1 if absent); the
  /// channel dim of input and output is the weight's rank minus one, counted from the end
  /// (conv2d: [N, C, H, W]; linear: [..., C]). An optional `bias` follows the output channels.
  channel_mixing = 1u << 7,
  /// Joins its tensor list argument along `dim` (cat).
  concatenation = 1u << 8,
  /// Reshapes its first argument; a dim survives when the sizes before it multiply to the
  /// same number in input and output and its own size is unchanged (reshape, view, flatten).
  reshape = 1u << 9,
  /// Reorders dims: `permute(dims)` or `transpose(dim0, dim1)`.
  permutation = 1u << 10,
  /// Indexes along its `dim` argument: keeps the rank (slice, narrow, index_select), removes
  /// the dim (select, squeeze) or inserts one (unsqueeze). The other dims keep their channels.
  dim_indexing = 1u << 11,
  /// Its meta function takes tensors of unknown rank itself (nms: indices, int64, of an
  /// unknown count whatever the boxes' rank), instead of the tracer's Note [Unknown in,
  /// unknown out].
  unknown_rank = 1u << 12,
  /// Its kernel is another library's op, which checks its own arguments and computes its own
  /// result (the LibTorch ops of docs/design.md, decision 14): an eager call runs the kernel
  /// alone, without the meta function first (Note [Meta before kernel] does not apply).
  external = 1u << 13,
};
constexpr OpFlags operator|(OpFlags a, OpFlags b) noexcept {
  return static_cast<OpFlags>(static_cast<std::uint32_t>(a) | static_cast<std::uint32_t>(b));
}
constexpr bool has_flag(OpFlags set, OpFlags flag) noexcept {
  return (static_cast<std::uint32_t>(set) & static_cast<std::uint32_t>(flag)) != 0;
}

/// The dtypes and shapes of an op's outputs, as its meta function computes them.
struct OutputMeta {
  boost::container::small_vector<TensorMeta, 1> outputs;
  bool is_list = false;  ///< the op returns Tensor[] (outputs may then hold any number)
  /// The op returns a number (`-> int` or `-> bool`), described by `outputs[0]`: a 0-dim int64
  /// or bool. Traced, it becomes a proxy SymInt or SymBool.
  bool is_number = false;
  /// A module's nested result (a leaf returning `(out, (h, c))` or `(out, None)`; is_list is
  /// then true), in pre-order: 0 a tensor (the next of `outputs`), -1 None, n > 0 a list of
  /// the n items that follow, -2 an empty list, -3 a dict whose number of items is the next
  /// entry (its keys are the next of `keys`), its values following; `{-1}` alone is a module
  /// that returns None. Empty for a tensor or a flat list of tensors.
  std::vector<std::int32_t> nesting;
  /// The keys of the dicts in `nesting`, in pre-order (str keys only).
  std::vector<std::string> keys;
  /// For a number: what is known of its value (an expression over named dims, or anonymous);
  /// for a float, of its value times `number_denominator`.
  Dim number_value;
  /// For a float: the power of two its value is `number_value` divided by (SymFloat).
  std::int64_t number_denominator = 1;
  /// A single-tensor result.
  static OutputMeta single(DType dtype, Shape shape) { return single(TensorMeta{dtype, std::move(shape)}); }
  /// A single-tensor result from its metadata (moved in once: OutputMeta is not cheap to move).
  static OutputMeta single(TensorMeta&& meta) {
    OutputMeta m;
    m.outputs.push_back(std::move(meta));
    return m;
  }
  /// A number result: `DType::int64` for an int, `DType::bool_` for a bool, `DType::float32`
  /// for a float (a double: the dtype only tells the kinds apart).
  static OutputMeta number(DType dtype) {
    OutputMeta m;
    m.outputs.push_back(TensorMeta{dtype, Shape{}});
    m.is_number = true;
    return m;
  }
};

struct OpCall;
/// Computes output metadata from argument metadata; throws OpError on bad input.
using MetaFn = OutputMeta (*)(const OpCall& call);
/// Computes the outputs of an all-concrete call, given what the meta function returned.
using KernelFn = Value (*)(const OpCall& call, const OutputMeta& meta);

namespace detail {
struct CallableFns;  // ops/callable.cpp
}

/// One op of the registry.
struct OpDef {
  OpSchema schema;
  MetaFn meta = nullptr;
  KernelFn kernel = nullptr;
  OpFlags flags = OpFlags::none;
  /// Set for a callable (register_callable): the user's functions, which `meta` and `kernel`
  /// forward to.
  std::shared_ptr<const detail::CallableFns> callable;
  [[nodiscard]] const std::string& name() const noexcept { return schema.name; }
  [[nodiscard]] bool has(OpFlags flag) const noexcept { return has_flag(flags, flag); }
};

/// One call of an op: the op, its complete positional arguments (defaults filled in and
/// types checked against the schema), the caller's location and the call style.
struct OpCall {
  const OpDef& op;
  std::span<const Value> args;
  std::source_location where;
  CallStyle style = CallStyle::function;

  [[nodiscard]] const Value& arg(std::size_t i) const { return args[i]; }
  [[nodiscard]] const Tensor& tensor(std::size_t i) const { return args[i].to_tensor(); }
  /// The tensor, or nullptr when the argument is None.
  [[nodiscard]] const Tensor* optional_tensor(std::size_t i) const {
    return args[i].is_none() ? nullptr : &args[i].to_tensor();
  }
  [[nodiscard]] TensorList tensor_list(std::size_t i) const { return args[i].to_tensor_list(); }
  [[nodiscard]] std::int64_t integer(std::size_t i) const { return args[i].to_int(); }
  [[nodiscard]] std::optional<std::int64_t> optional_integer(std::size_t i) const {
    return args[i].is_none() ? std::nullopt : std::optional(args[i].to_int());
  }
  [[nodiscard]] IntList int_list(std::size_t i) const { return args[i].to_int_list(); }
  /// What a size in `size_list` is when it is a proxy SymInt (unknown at trace time).
  static constexpr std::int64_t unknown_size = std::numeric_limits<std::int64_t>::min();
  /// An int[] of sizes that may hold proxy SymInts (`reshape({b, -1})` traced with an unknown
  /// batch): each proxy reads as `unknown_size`.
  [[nodiscard]] IntList size_list(std::size_t i) const {
    IntList out;
    for (const Value& v : args[i].to_list()) out.push_back(v.is_symint() ? unknown_size : v.to_int());
    return out;
  }
  /// An int[] of sizes that may hold proxy SymInts, each read as what is known of it (a
  /// size, an expression over named dims, or an anonymous dim). Negative known sizes stay
  /// negative (-1 for reshape's inferred dim): they are returned as `raw`, not as Dims.
  struct SizeArg {
    std::int64_t value;  ///< the integer, or unknown_size for a proxy
    Dim dim;             ///< the integer's Dim when >= 0, the proxy's otherwise
  };
  [[nodiscard]] std::vector<SizeArg> size_args(std::size_t i) const {
    std::vector<SizeArg> out;
    for (const Value& v : args[i].to_list()) {
      if (v.is_symint()) out.push_back({unknown_size, v.to_sym_int().dim()});
      else out.push_back({v.to_int(), Dim(v.to_int())});
    }
    return out;
  }
  [[nodiscard]] double real(std::size_t i) const { return args[i].to_double(); }
  [[nodiscard]] bool boolean(std::size_t i) const { return args[i].to_bool(); }
  [[nodiscard]] Scalar scalar(std::size_t i) const { return args[i].to_scalar(); }
  [[nodiscard]] std::optional<Scalar> optional_scalar(std::size_t i) const {
    return args[i].is_none() ? std::nullopt : std::optional(args[i].to_scalar());
  }
  [[nodiscard]] const std::string& string(std::size_t i) const { return args[i].to_string_ref(); }
  [[nodiscard]] DType dtype(std::size_t i) const { return args[i].to_dtype(); }

  /// Throws OpUnsupported `file:line: op(): <formatted>`: input PyTorch accepts that this op
  /// does not handle.
  template <class... A>
  [[noreturn]] void unsupported(fmt::format_string<A...> format, A&&... a) const {
    detail::vthrow_op_unsupported(op.name(), where, format, fmt::make_format_args(a...));
  }

  /// Throws OpError `file:line: op(): <formatted>`.
  template <class... A>
  [[noreturn]] void fail(fmt::format_string<A...> format, A&&... a) const {
    detail::vthrow_op_error(op.name(), where, format, fmt::make_format_args(a...));
  }
};

}  // namespace symtrace
