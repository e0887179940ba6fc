#pragma once
/// \file
/// Channel-dependency analysis for structured pruning (the job of Torch-Pruning's
/// DependencyGraph and ModelOpt's search-space builder): the groups of tensors whose channels
/// must be pruned together. A group is one set of channels, born at a layer's output
/// (a `conv2d` or `linear` weight's dim 0) and followed through the graph: a batch norm after
/// it, every layer feeding the same residual `add`, a depthwise convolution (which ties its
/// input channels to its output channels), up to the layers that consume it (their weight's
/// dim 1) — at an offset after a concatenation. The channels a grouped convolution reads or
/// writes are cut alike in each of its groups (its groups must stay equal): such a group has a
/// `period`, and a cut keeps the same positions in every block of that many channels. The
/// heads of an `nn::MultiheadAttention` are a group whose channels are heads (`width` rows of
/// its projections each): cutting whole heads leaves the others' results unchanged.
///
/// Ops are classified by the properties the op registry declares (OpFlags: elementwise,
/// channel_passthrough, channel_mixing, concatenation, reshape, permutation, dim_indexing,
/// reduction). An op with none of them, a `call_module` leaf, a failed module, the graph's
/// inputs and its output are boundaries: channels that reach one cannot be pruned, and the
/// group says why (`prunable` false with a `reason`). So are channels that meet a tensor the
/// cut would not follow: a bias or per-channel tensor computed in the graph, a parameter also
/// used where its dims cannot be followed (returned, multiplied by a matmul), a weight holding
/// other channels too (a layer called twice; a module also traced in another graph), a layer
/// norm over the channels without a weight to cut with them.
///
/// Failed modules are boundaries, and the analysis reports the layers they hide: the
/// channel-mixing layers of their subtrees that no prunable group reaches. The graphs of
/// their children, traced on their own by the collection, are analysed too, so the groups
/// wholly inside a child are still found.
///
///     GraphCollection c = trace_for_analysis(*model, {Shape{1, 3, 224, 224}});
///     ChannelGroups groups = channel_groups(*model, c);

#include "symtrace/robust/coverage_report.hpp"
#include "symtrace/robust/graph_collection.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace symtrace {

/// What a member tensor's channels are to its layer.
enum class ChannelRole : std::uint8_t {
  out,    ///< the output channels of a layer (its weight's dim 0, its bias)
  in,     ///< the input channels of a layer (its weight's dim 1)
  param,  ///< a per-channel tensor on the way (batch norm's weight, bias, running statistics;
          ///< a depthwise convolution's weight; a parameter added along the channels)
};
/// "out", "in" or "param".
[[nodiscard]] std::string_view to_string(ChannelRole role) noexcept;

/// One tensor of the model that a group's channels run through.
struct GroupMember {
  std::string tensor;       ///< qualified path of the parameter or buffer ("layer1.0.conv1.weight")
  std::int64_t dim = 0;     ///< the dim of that tensor indexed by the group's channels
  std::int64_t offset = 0;  ///< index of the group's first channel along `dim` (concatenation)
  ChannelRole role = ChannelRole::param;
  /// 0 when the group's channel c is index `offset + c` of `dim`; else the dim holds one block
  /// of the group's channels, channel c at `offset + c % period` (a grouped convolution's
  /// weight, whose dim 1 holds one group's input channels, shared by all its groups).
  std::int64_t period = 0;
  friend bool operator==(const GroupMember&, const GroupMember&) = default;
};

/// One group of channels; see the file comment.
struct ChannelGroup {
  std::string graph;          ///< path of the graph's module in the collection ("" for the model)
  std::int64_t channels = 0;  ///< how many channels the group has
  /// 0 when any channels may be kept; else the channels are blocks of `period` (the groups of
  /// a grouped convolution), and a cut must keep the same positions in every block.
  std::int64_t period = 0;
  /// How many consecutive indices of each member's dim one channel of the group is: 1, or an
  /// attention layer's head size (the group of its heads, one channel per head).
  std::int64_t width = 1;
  std::vector<GroupMember> members;  ///< in graph order
  bool prunable = true;
  /// Why the group cannot be pruned ("reaches the graph's output", "used by matmul at
  /// vit.cpp:30", ...); empty when prunable.
  std::string reason;
  /// The modules owning the group's `out` members (the layers that produce the channels).
  [[nodiscard]] std::vector<std::string> producers() const;
};

/// The channel-mixing layers inside a failed module that no prunable group reaches.
struct HiddenLayers {
  std::string module;               ///< the failed module's path
  std::string type;                 ///< its type
  std::vector<std::string> layers;  ///< paths of the modules owning those layers' weights
};

/// What the analysis of a collection found.
struct ChannelGroups {
  /// Every group that has a layer's output or input channels, graph by graph in the
  /// collection's order, each graph's groups in the order their first member appears.
  std::vector<ChannelGroup> groups;
  std::vector<HiddenLayers> hidden;  ///< one entry per failed module, in the order of failures
  [[nodiscard]] std::size_t num_prunable() const noexcept;
};

/// The groups of `graph`, a graph traced from the module at `path` in the model ("" for the
/// model): its get_attr targets, prefixed with `path`, are the members' paths. A graph traced
/// with built-in layers as leaves has its layers as `call_module` boundaries: trace with an
/// AnalysisTracer (analysis_trace.hpp).
[[nodiscard]] std::vector<ChannelGroup> channel_groups(const Graph& graph, const std::string& path = {});

/// The groups of every graph of `collection` (made from `model`, preferably by
/// `trace_for_analysis`), and the layers each failed module hides. A group of a child's graph
/// whose channels another graph also holds is kept once (the first graph's).
[[nodiscard]] ChannelGroups channel_groups(const Module& model, const GraphCollection& collection);

/// The groups as text, one paragraph per group naming the layers (modules) whose outputs
/// (`out`) and inputs (`in`) it cuts and the per-channel tensors that go with it (`with`), then
/// the layers each failed module hides; or as JSON:
/// `{"groups": [{"graph", "channels", "prunable", "reason", "members": [{"tensor", "dim",
///   "offset", "role"}]}], "hidden": [{"module", "type", "layers": [...]}]}`.
[[nodiscard]] std::string to_string(const ChannelGroups& groups, ReportFormat format = ReportFormat::text);

}  // namespace symtrace
