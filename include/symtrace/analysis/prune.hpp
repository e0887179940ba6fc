#pragma once
/// \file
/// Structured pruning along the groups of channel_groups.hpp: choose the channels of a group
/// to keep (smallest L1 norm pruned first) and cut every member tensor of the chosen groups in
/// place, so the model runs with the smaller layers. Parameters are replaced through
/// `Tensor::set_`, so every handle to them (the layer's member, the state dict) sees the new
/// data; the layers' own sizes (`Conv2d::out_channels`, a depthwise convolution's `groups`,
/// `BatchNorm2d::num_features`, `LayerNorm::normalized_shape`, ...) are updated to match.
///
///     ChannelGroups groups = channel_groups(*model, trace_for_analysis(*model, {x}));
///     std::vector<ChannelSelection> plan;
///     for (const ChannelGroup& g : groups.groups)
///       if (g.prunable) plan.push_back({&g, channels_to_keep(*model, g, 0.3)});
///     prune_channels(*model, plan);

#include "symtrace/analysis/channel_groups.hpp"

#include <cstdint>
#include <source_location>
#include <span>
#include <vector>

namespace symtrace {

/// How channels are ranked for pruning: by the L1 norm (sum of magnitudes) or the L2 norm of
/// the slices of the group's `out` members (Torch-Pruning's MagnitudeImportance, p = 1 or 2).
enum class PruneCriterion : std::uint8_t {
  l1,
  l2
};

/// The channels of `group` to keep when a fraction `amount` (in [0, 1)) of them is pruned:
/// floor(amount x channels) channels go, those whose `out` members have the smallest norm by
/// `criterion` (over those members' slices together; ties keep the lower index). In a group with
/// a `period` (a grouped convolution's channels), floor(amount x period) positions go from every
/// block, ranked by their norms summed over the blocks. Returned in increasing order. Throws std::invalid_argument for an amount out of range, a group that is
/// not prunable or has no `out` member, or a member the model does not hold.
[[nodiscard]] std::vector<std::int64_t> channels_to_keep(const Module& model, const ChannelGroup& group, double amount,
                                                         PruneCriterion criterion = PruneCriterion::l1,
                                                         std::source_location where = std::source_location::current());

/// A group and the channels of it to keep (indices into the group, increasing).
struct ChannelSelection {
  const ChannelGroup* group = nullptr;
  std::vector<std::int64_t> keep;
};

/// Keeps only the selected channels of every group in `selections`, cutting each member tensor
/// along its dim (at the member's offset) and updating the sizes of the layers that own them.
/// All selections are applied at once, so groups that share a tensor (a concatenation feeding
/// one layer) cut it consistently. Everything is checked first — groups prunable, indices
/// valid (the same positions in every block of a group with a period), no group twice, members
/// present with the right sizes — and a std::invalid_argument
/// naming the problem leaves the model unchanged.
void prune_channels(Module& model, std::span<const ChannelSelection> selections,
                    std::source_location where = std::source_location::current());

/// Zeroes, in `model`, the weights with which the layers reading each group's channels read the
/// ones `selections` does not keep (each `in` member's slices), so that no layer sees them: what
/// the model then computes is what `prune_channels` with the same selections computes, exactly
/// (the test of a cut: the removed channels were read by nothing else). Checked as
/// prune_channels checks; the model is unchanged on error.
void mask_channels(Module& model, std::span<const ChannelSelection> selections,
                   std::source_location where = std::source_location::current());

}  // namespace symtrace
