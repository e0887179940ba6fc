// Recording cond(): each branch traced into a subgraph of its own, then one `higher_order.cond`
// node that picks between them and a getitem per result (Tracer::record_cond).
#include "symtrace/trace/tracer.hpp"

#include "symtrace/core/error.hpp"
#include "symtrace/trace/cond.hpp"
#include "symtrace/trace/tracing_state.hpp"
#include "symtrace/trace/detail/tracing_scopes.hpp"
#include "recordable.hpp"

#include <fmt/format.h>

#include <string>

namespace symtrace {

Value Tracer::call_cond(const Tensor& pred, const CondBranch& then_fn, const CondBranch& else_fn,
                        const TensorList& operands, std::source_location where) {
  return record_cond(pred, then_fn, else_fn, operands, where);
}

namespace {

/// The tensors a cond branch returned, as metadata; `single` tells a lone tensor from a list.
OutputMeta branch_meta(const Value& result, bool& single, const char* branch, std::source_location where) {
  OutputMeta meta;
  meta.is_list = true;
  single = result.is_tensor();
  if (single) {
    meta.outputs.push_back(result.to_tensor().meta());
    return meta;
  }
  if (const ValueList* list = boost::variant2::get_if<ValueList>(&result.value)) {
    for (const Value& v : *list) {
      const Tensor* t = boost::variant2::get_if<Tensor>(&v.value);
      if (t == nullptr || !t->defined()) break;
      meta.outputs.push_back(t->meta());
    }
    if (meta.outputs.size() == list->size()) return meta;
  }
  throw_trace_error(where, "cond(): {} returned {}: a branch returns a Tensor or a list of tensors", branch,
                    to_string(result));
}

std::string describe(const OutputMeta& meta, bool single) {
  if (single) return to_string(meta.outputs.at(0));
  std::string out = "[";
  for (std::size_t i = 0; i < meta.outputs.size(); ++i) out += (i ? ", " : "") + to_string(meta.outputs[i]);
  return out + "]";
}

}  // namespace

Value Tracer::record_cond(const Tensor& pred, const CondBranch& then_fn, const CondBranch& else_fn,
                          const TensorList& operands, std::source_location where) {
  TracingState& st = state();
  detail::check_tensor(st, pred, where);
  for (const Tensor& t : operands) detail::check_tensor(st, t, where);

  // Each branch is traced into a graph of its own, on placeholders standing for the operands.
  auto trace_branch = [&](const CondBranch& fn, const char* which, Graph& sub, bool& single) {
    detail::SubgraphRun run(st, sub);
    TensorList args;
    args.reserve(operands.size());
    for (std::size_t i = 0; i < operands.size(); ++i) {
      Node& placeholder = create_node(OpKind::placeholder, fmt::format("operand{}", i), {}, {}, where);
      args.push_back(proxy(placeholder, operands[i].meta()));
    }
    const Value result = fn(args);
    OutputMeta meta = branch_meta(result, single, which, where);
    detail::check_recordable(st, result, where);
    Argument out = create_arg(result, where);
    if (single) out = Argument(ArgumentList{std::move(out)});
    sub.output(std::move(out), where);
    return meta;
  };
  Graph then_graph, else_graph;
  bool then_single = false, else_single = false;
  OutputMeta then_meta, else_meta;
  if (st.meta_only()) {
    // In a leaf's side run only the metadata matters: run both branches, record nothing.
    then_meta = branch_meta(then_fn(operands), then_single, "then_fn", where);
    else_meta = branch_meta(else_fn(operands), else_single, "else_fn", where);
  } else {
    then_meta = trace_branch(then_fn, "then_fn", then_graph, then_single);
    else_meta = trace_branch(else_fn, "else_fn", else_graph, else_single);
  }

  // The result: what both branches agree on; sizes that differ are unknown.
  bool agree = then_single == else_single && then_meta.outputs.size() == else_meta.outputs.size();
  OutputMeta meta;
  meta.is_list = true;
  for (std::size_t i = 0; agree && i < then_meta.outputs.size(); ++i) {
    const TensorMeta& a = then_meta.outputs[i];
    const TensorMeta& b = else_meta.outputs[i];
    agree = a.dtype == b.dtype && (a.shape.rank() == b.shape.rank() || !a.shape.is_rank_known() ||
                                   !b.shape.is_rank_known());
    if (agree && (!a.shape.is_rank_known() || !b.shape.is_rank_known())) {
      meta.outputs.push_back(TensorMeta{a.dtype, Shape::unknown_rank()});
      continue;
    }
    TensorMeta merged = a;
    for (std::size_t d = 0; agree && d < a.shape.rank(); ++d) {
      if (a.shape[d] != b.shape[d]) merged.shape[d] = Dim::unknown();
    }
    meta.outputs.push_back(std::move(merged));
  }
  if (!agree) {
    throw_trace_error(where,
                      "cond(): the branches return different things: then_fn returns {}, else_fn returns {}; both "
                      "must return the same number of tensors with the same dtypes and ranks",
                      describe(then_meta, then_single), describe(else_meta, else_single));
  }
  if (st.meta_only()) {
    Value results = meta_result(meta, where);
    return then_single ? results.to_list().at(0) : results;
  }

  Graph& graph = st.graph();
  Graph::Checkpoint checkpoint = graph.checkpoint();  // nothing stays if recording fails midway
  const std::string then_name = graph.add_subgraph("true_graph", std::move(then_graph));
  const std::string else_name = graph.add_subgraph("false_graph", std::move(else_graph));
  Node& then_node = create_node(OpKind::get_attr, then_name, {}, {}, where);
  Node& else_node = create_node(OpKind::get_attr, else_name, {}, {}, where);
  ArgumentList operand_args;
  operand_args.reserve(operands.size());
  for (const Tensor& t : operands) operand_args.push_back(create_arg(t, where));
  Node& node = create_node(OpKind::call_function, cond_target,
                           {create_arg(pred, where), Argument(then_node), Argument(else_node),
                            Argument(std::move(operand_args))},
                           {}, where);
  Value results = wrap_result(node, meta, where);
  checkpoint.commit();
  if (then_single) return results.to_list().at(0);
  return results;
}

}  // namespace symtrace
