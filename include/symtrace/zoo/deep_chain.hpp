#pragma once
/// \file
/// `DeepChain`: modules nested `n` deep, each holding the next as its child `inner` and
/// calling it in forward, the innermost (`ChainEnd`) branching on tensor data. It has no
/// PyTorch counterpart in bench/fx/models.py: it stresses what grows with depth rather than
/// with width: a tracer's frames and the module paths ("inner.inner.inner...", `n - 1`
/// components at the end), the stack a nested call takes, a report's module tree.
///
/// ```
/// auto model = symtrace::zoo::deep_chain(1000);  // 272 parameters (the end's), input [B, 16]
/// symtrace::GraphCollection c = symtrace::recursive_trace(*model, {symtrace::InputSpec({1, 16})});
/// c.failures()[0].module;  // "inner.inner. ... .inner" (999 components): the ChainEnd
/// ```

#include "symtrace/nn/linear.hpp"
#include "symtrace/nn/module_holder.hpp"
#include "symtrace/nn/typed_module.hpp"

#include <cstdint>
#include <memory>
#include <source_location>

namespace symtrace::zoo {

/// The innermost module of a DeepChain: h = fc(x), then relu(h) when h.sum() > 0, else h (an
/// `if` on tensor data, which a symbolic trace cannot follow).
class ChainEndImpl : public TypedModule<ChainEndImpl> {
 public:
  explicit ChainEndImpl(std::int64_t width);
  /// x: [..., width] -> [..., width].
  virtual Tensor forward(const Tensor& x);
  /// The source line of the data-dependent branch in forward (where a symbolic trace fails).
  static const int data_branch_line;

  nn::Linear fc{nullptr};
};
SYMTRACE_MODULE(ChainEnd);

/// One link of a DeepChain: inner((x + relu(x)) * 0.5), `inner` being the next link or the end. A link
/// holds no parameter: what a trace records per level is three ops and a call, with no path in
/// it (a get_attr node would be named after its module's path, which grows with the depth).
class ChainLinkImpl : public TypedModule<ChainLinkImpl> {
 public:
  /// A link whose child `inner` is the link `next`.
  explicit ChainLinkImpl(std::shared_ptr<ChainLinkImpl> next);
  /// The last link: its child `inner` is `end`.
  explicit ChainLinkImpl(ChainEnd end);
  /// x: [..., width] -> [..., width].
  virtual Tensor forward(const Tensor& x);

  std::shared_ptr<ChainLinkImpl> next;  ///< the next link, or null in the last link
  ChainEnd end{nullptr};                ///< the end, in the last link only
};
SYMTRACE_MODULE(ChainLink);

/// `n` modules nested in a chain, `n - 1` ChainLinks around a ChainEnd (whose Linear(width,
/// width) is a module more, below the chain); built bottom up, without recursion. Throws
/// std::invalid_argument unless n >= 2 and width >= 1.
[[nodiscard]] std::shared_ptr<ChainLinkImpl> deep_chain(std::int64_t n, std::int64_t width = 16,
                                                        std::source_location where = std::source_location::current());

}  // namespace symtrace::zoo
