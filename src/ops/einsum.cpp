// einsum: sums of products over subscripted dims, PyTorch's equation language. An equation
// names each operand's dims by letters (`bij,bjk->bik`), with at most one ellipsis (`...`) per
// operand for the dims the letters leave, broadcast across operands as in elementwise ops. A
// letter repeated within an operand takes its diagonal; dims of size 1 broadcast against the
// same letter's size elsewhere. Without `->` the output is the ellipsis dims, then the letters
// that appear once, in alphabetical order (upper case first); letters absent from the output
// (and the ellipsis dims, when the output has no ellipsis) are summed over.
//
// The kernel computes the definition directly: for each output element, the sum over the
// summed letters of the product of the operands' elements, accumulated in double. Its work is
// the product of all the letters' sizes, the MACs analysis counts (einsum_macs).
// See Note [Meta before kernel]: the meta function does all checking.

#include "symtrace/ops/linalg.hpp"

#include "ops/call_util.hpp"
#include "ops/families.hpp"
#include "ops/kernel_util.hpp"
#include "ops/meta_util.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <string>
#include <variant>
#include <vector>

namespace symtrace {

namespace {

// Letters A-Z are labels 0-25, a-z 26-51 (PyTorch's order); the ellipsis dims, left to right,
// are labels 52 and up.
constexpr int kLetters = 52;

int letter_label(char c) { return c >= 'A' && c <= 'Z' ? c - 'A' : c - 'a' + 26; }
char label_letter(int label) { return static_cast<char>(label < 26 ? 'A' + label : 'a' + label - 26); }
bool is_letter(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'); }

// An equation matched to the operands' ranks.
struct Equation {
  std::size_t ellipsis_dims = 0;           // the broadcast ellipsis's rank
  std::vector<std::vector<int>> operands;  // each operand's labels, dim by dim
  std::vector<int> output;                 // the output's labels, dim by dim
  [[nodiscard]] int labels() const { return kLetters + static_cast<int>(ellipsis_dims); }
};

// One side's terms: the letters of each, with '.' standing for its ellipsis. Empty on success,
// else why the text is not an equation.
std::string split_terms(std::string_view text, std::size_t offset, std::vector<std::string>& terms) {
  terms.emplace_back();
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == ' ') continue;
    if (c == ',') {
      terms.emplace_back();
    } else if (c == '.') {
      if (text.substr(i, 3) != "..." || terms.back().find('.') != std::string::npos)
        return fmt::format("a '.' at index {} is not part of the one ellipsis ('...') a term may have", offset + i);
      terms.back() += '.';
      i += 2;
    } else if (is_letter(c)) {
      terms.back() += c;
    } else {
      return fmt::format("'{}' at index {} is not a subscript: subscripts are letters a-z and A-Z", c, offset + i);
    }
  }
  return {};
}

// Parses `equation` for operands of the given ranks; returns the reason when it does not fit them.
std::variant<Equation, std::string> parse(std::string_view equation, const std::vector<std::size_t>& ranks) {
  const std::size_t arrow = equation.find("->");
  std::vector<std::string> inputs;
  if (std::string why = split_terms(equation.substr(0, arrow), 0, inputs); !why.empty()) return why;
  if (inputs.size() != ranks.size())
    return fmt::format("the equation has {} operand term(s) but {} operand(s) are given", inputs.size(), ranks.size());

  Equation eq;
  std::array<int, kLetters> count{};
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const std::string& term = inputs[i];
    const bool has_ellipsis = term.find('.') != std::string::npos;
    const std::size_t letters = term.size() - (has_ellipsis ? 1 : 0);
    if (has_ellipsis ? letters > ranks[i] : letters != ranks[i])
      return fmt::format("operand {} has {} dims, but its subscripts '{}' name {}{}", i, ranks[i],
                         has_ellipsis ? term.substr(0, term.find('.')) + "..." + term.substr(term.find('.') + 1) : term,
                         letters, has_ellipsis ? " and an ellipsis" : "");
    if (has_ellipsis) eq.ellipsis_dims = std::max(eq.ellipsis_dims, ranks[i] - letters);
  }
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    std::vector<int>& labels = eq.operands.emplace_back();
    for (const char c : inputs[i]) {
      if (c == '.') {
        const std::size_t n = ranks[i] - (inputs[i].size() - 1);  // this operand's ellipsis dims, right-aligned
        for (std::size_t k = eq.ellipsis_dims - n; k < eq.ellipsis_dims; ++k) labels.push_back(kLetters + static_cast<int>(k));
        continue;
      }
      labels.push_back(letter_label(c));
      ++count[static_cast<std::size_t>(letter_label(c))];
    }
  }

  const bool any_ellipsis = std::any_of(inputs.begin(), inputs.end(),
                                        [](const std::string& t) { return t.find('.') != std::string::npos; });
  if (arrow == std::string_view::npos) {
    for (std::size_t k = 0; k < eq.ellipsis_dims; ++k) eq.output.push_back(kLetters + static_cast<int>(k));
    for (int l = 0; l < kLetters; ++l)
      if (count[static_cast<std::size_t>(l)] == 1) eq.output.push_back(l);
    return eq;
  }
  std::vector<std::string> outputs;
  if (std::string why = split_terms(equation.substr(arrow + 2), arrow + 2, outputs); !why.empty()) return why;
  if (outputs.size() != 1) return std::string("the output has more than one term (a ',' after '->')");
  std::array<bool, kLetters> seen{};
  for (const char c : outputs[0]) {
    if (c == '.') {
      if (!any_ellipsis) return std::string("the output has an ellipsis ('...') but no operand has one");
      for (std::size_t k = 0; k < eq.ellipsis_dims; ++k) eq.output.push_back(kLetters + static_cast<int>(k));
      continue;
    }
    const auto l = static_cast<std::size_t>(letter_label(c));
    if (count[l] == 0) return fmt::format("the output's subscript {} is not an operand's", c);
    if (seen[l]) return fmt::format("the output's subscript {} appears more than once", c);
    seen[l] = true;
    eq.output.push_back(static_cast<int>(l));
  }
  return eq;
}

std::string label_text(int label) {
  return label < kLetters ? std::string(1, label_letter(label)) : fmt::format("... (dim {})", label - kLetters);
}

// The equation of an einsum call, matched to its operands.
Equation call_equation(const OpCall& call, const TensorList& operands) {
  std::vector<std::size_t> ranks;
  for (const Tensor& t : operands) ranks.push_back(static_cast<std::size_t>(t.dim()));
  auto parsed = parse(call.string(0), ranks);
  if (auto* why = std::get_if<std::string>(&parsed)) call.fail("equation '{}': {}", call.string(0), *why);
  return std::get<Equation>(std::move(parsed));
}

OutputMeta einsum_meta(const OpCall& call) {
  const TensorList operands = call.tensor_list(1);
  if (operands.empty()) call.fail("einsum needs at least one operand, got none");
  for (std::size_t i = 0; i < operands.size(); ++i) {
    if (operands[i].dtype() != DType::float32)
      call.unsupported("operand {} is {} (shape {}); symtrace's einsum takes float32 operands", i, operands[i].dtype(),
                       operands[i].shape());
  }
  const Equation eq = call_equation(call, operands);

  // Each label's size: the same in every dim it names, except that size 1 broadcasts (across
  // operands, not along a diagonal).
  std::vector<std::optional<Dim>> size(static_cast<std::size_t>(eq.labels()));
  for (std::size_t i = 0; i < operands.size(); ++i) {
    const Shape& shape = operands[i].shape();
    std::vector<std::optional<Dim>> own(size.size());
    for (std::size_t d = 0; d < shape.rank(); ++d) {
      const auto l = static_cast<std::size_t>(eq.operands[i][d]);
      const Dim dim = shape[d];
      if (own[l]) {
        if (!detail::same_size(call, *own[l], dim, "einsum(): a repeated subscript takes a diagonal"))
          call.fail("equation '{}': subscript {} is repeated in operand {} of shape {}, whose dims there differ ({} "
                    "and {}); a repeated subscript takes the diagonal of equal dims",
                    call.string(0), label_text(eq.operands[i][d]), i, shape, *own[l], dim);
        continue;
      }
      own[l] = dim;
      std::optional<Dim>& seen = size[l];
      if (!seen || (seen->is_known() && seen->raw() == 1)) {
        seen = dim;
      } else if (!(dim.is_known() && dim.raw() == 1)) {
        const std::optional<Dim> same = detail::same_size(call, *seen, dim, "einsum(): a subscript names one size");
        if (!same)
          call.fail("equation '{}': subscript {} has size {} in operand {} of shape {}, which does not broadcast with "
                    "its size {} in an earlier operand",
                    call.string(0), label_text(eq.operands[i][d]), dim, i, shape, *seen);
        seen = *same;
      }
    }
  }
  Shape out;
  for (const int l : eq.output) out.push_back(*size[static_cast<std::size_t>(l)]);
  return OutputMeta::single(DType::float32, std::move(out));
}

Value einsum_kernel(const OpCall& call, const OutputMeta& meta) {
  TensorList operands;
  for (const Tensor& t : call.tensor_list(1)) operands.push_back(detail::contiguous_copy(t));
  const Equation eq = call_equation(call, operands);
  Tensor out = detail::empty_like_meta(meta.outputs[0]);
  const auto labels = static_cast<std::size_t>(eq.labels());

  // Label sizes (a broadcast size 1 gives way), and each operand's stride per label: the sum of
  // its strides over the dims the label names (a diagonal), 0 where it broadcasts.
  std::vector<std::int64_t> size(labels, 1);
  std::vector<bool> used(labels, false);
  for (std::size_t i = 0; i < operands.size(); ++i)
    for (std::size_t d = 0; d < eq.operands[i].size(); ++d) {
      const auto l = static_cast<std::size_t>(eq.operands[i][d]);
      used[l] = true;
      size[l] = std::max(size[l], operands[i].shape()[d].value());
      if (operands[i].shape()[d].value() == 0) size[l] = 0;
    }
  std::vector<std::vector<std::int64_t>> stride(operands.size(), std::vector<std::int64_t>(labels, 0));
  for (std::size_t i = 0; i < operands.size(); ++i) {
    const IntList sizes = operands[i].shape().sizes();
    std::int64_t s = 1;
    for (std::size_t d = sizes.size(); d-- > 0;) {
      const auto l = static_cast<std::size_t>(eq.operands[i][d]);
      if (sizes[d] == size[l]) stride[i][l] += s;
      s *= sizes[d];
    }
  }
  // The output's labels, then the summed ones.
  std::vector<std::size_t> order;
  for (const int l : eq.output) order.push_back(static_cast<std::size_t>(l));
  const std::size_t kept = order.size();
  for (std::size_t l = 0; l < labels; ++l)
    if (used[l] && std::find(eq.output.begin(), eq.output.end(), static_cast<int>(l)) == eq.output.end())
      order.push_back(l);

  const std::int64_t total = *out.shape().numel();
  float* po = total > 0 ? out.data_ptr<float>() : nullptr;
  if (total == 0) return out;
  std::int64_t summed = 1;
  for (std::size_t k = kept; k < order.size(); ++k) summed *= size[order[k]];
  std::vector<const float*> data;
  for (const Tensor& t : operands) data.push_back(t.data_ptr<float>());

  std::vector<std::int64_t> index(order.size(), 0);
  std::vector<std::int64_t> offset(operands.size(), 0);
  // Advances the odometer over order[from, to): the last label fastest; false when it wraps.
  const auto advance = [&](std::size_t from, std::size_t to) {
    for (std::size_t k = to; k-- > from;) {
      const std::size_t l = order[k];
      for (std::size_t i = 0; i < operands.size(); ++i) offset[i] += stride[i][l];
      if (++index[k] < size[l]) return true;
      for (std::size_t i = 0; i < operands.size(); ++i) offset[i] -= stride[i][l] * size[l];
      index[k] = 0;
    }
    return false;
  };
  for (std::int64_t e = 0; e < total; ++e) {
    double sum = 0;
    for (std::int64_t s = 0; s < summed; ++s) {
      double product = 1;
      for (std::size_t i = 0; i < operands.size(); ++i) product *= data[i][offset[i]];
      sum += product;
      advance(kept, order.size());
    }
    po[e] = static_cast<float>(sum);
    advance(0, kept);
  }
  return out;
}

}  // namespace

void detail::register_einsum_ops(OpRegistry& r) {
  r.add("einsum(str equation, Tensor[] tensors, *, int[]? path=None) -> Tensor", einsum_meta, einsum_kernel);
}

std::optional<SymExpr> einsum_macs(std::string_view equation, const std::vector<Shape>& shapes) {
  std::vector<std::size_t> ranks;
  for (const Shape& s : shapes) {
    if (!s.is_rank_known()) return std::nullopt;
    ranks.push_back(s.rank());
  }
  const auto parsed = parse(equation, ranks);
  const Equation* eq = std::get_if<Equation>(&parsed);
  if (eq == nullptr) return std::nullopt;
  // Each label's size: the first that is not a broadcast 1.
  std::vector<std::optional<Dim>> size(static_cast<std::size_t>(eq->labels()));
  for (std::size_t i = 0; i < shapes.size(); ++i)
    for (std::size_t d = 0; d < shapes[i].rank(); ++d) {
      std::optional<Dim>& s = size[static_cast<std::size_t>(eq->operands[i][d])];
      if (!s || (s->is_known() && s->raw() == 1)) s = shapes[i][d];
    }
  SymExpr macs(1);
  for (const std::optional<Dim>& s : size) {
    if (!s) continue;
    const std::optional<SymExpr> e = s->expr();
    if (!e) return std::nullopt;
    macs = macs * *e;
  }
  return macs;
}

Tensor einsum(std::string_view equation, const TensorList& operands, Where where) {
  return detail::invoke(SYMTRACE_OP("einsum"), where, CallStyle::function, std::string(equation), operands,
                        Value());
}

}  // namespace symtrace
