// The read-only Boost.Graph view's two out-of-line pieces.
#include "symtrace/graph/bgl.hpp"

#include "graph_impl.hpp"

namespace symtrace::detail {

const GraphStorage& storage(const Graph& graph) { return GraphImpl::of(graph).storage(); }

bool IsLive::operator()(Vertex v) const noexcept { return ((*storage)[v].node.flags_ & Node::live) != 0; }

}  // namespace symtrace::detail
