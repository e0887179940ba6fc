// Structured pruning. prune_channels (and mask_channels) checks everything and computes every
// new tensor before it replaces any, so a bad selection leaves the model as it was; the replacement itself
// (Tensor::set_) cannot fail. The layers' size fields are then made to agree with their
// new weights: that is the one place where layer types matter, as in any pruning tool.

#include "symtrace/analysis/prune.hpp"

#include "symtrace/core/error.hpp"
#include "symtrace/core/factories.hpp"
#include "symtrace/nn/attention.hpp"
#include "symtrace/nn/batch_norm.hpp"
#include "symtrace/nn/conv.hpp"
#include "symtrace/nn/layer_norm.hpp"
#include "symtrace/nn/linear.hpp"
#include "symtrace/nn/module.hpp"
#include "symtrace/ops/creation.hpp"

#include <algorithm>
#include <deque>
#include <map>
#include <numeric>
#include <set>
#include <utility>

namespace symtrace {

namespace {

std::string owner_of(const std::string& tensor) {
  const std::size_t dot = tensor.rfind('.');
  return dot == std::string::npos ? std::string() : tensor.substr(0, dot);
}

/// How many channels of `group` a member's dim holds: all of them, or one block.
std::int64_t extent(const GroupMember& member, const ChannelGroup& group) {
  return member.period > 0 ? member.period : group.channels;
}

/// The tensor at `member.tensor`, checked to hold the member's channels.
Tensor member_tensor(const Module& model, const GroupMember& member, const ChannelGroup& group,
                     std::source_location where) {
  const std::int64_t channels = extent(member, group) * group.width;
  Tensor t = model.get_tensor(member.tensor, where);
  const std::vector<std::int64_t> sizes = t.meta().shape.sizes();
  if (member.dim < 0 || member.dim >= static_cast<std::int64_t>(sizes.size()) || member.offset < 0 ||
      member.offset + channels > sizes[static_cast<std::size_t>(member.dim)]) {
    throw_invalid_argument(where, "'{}' of shape {} does not hold {} channels at offset {} of dim {}", member.tensor,
                           t.meta().shape, channels, member.offset, member.dim);
  }
  return t;
}

/// Makes a layer's size fields agree with its (cut) parameters.
void update_layer(Module& m) {
  if (auto* conv = dynamic_cast<nn::Conv2dImpl*>(&m)) {
    const std::vector<std::int64_t> w = conv->weight.meta().shape.sizes();
    const bool depthwise = conv->options.groups > 1 && conv->options.groups == conv->in_channels &&
                           conv->options.groups == conv->out_channels;
    conv->out_channels = w[0];
    if (depthwise) conv->options.groups = w[0];
    conv->in_channels = w[1] * conv->options.groups;
  } else if (auto* linear = dynamic_cast<nn::LinearImpl*>(&m)) {
    const std::vector<std::int64_t> w = linear->weight.meta().shape.sizes();
    linear->out_features = w[0];
    linear->in_features = w[1];
  } else if (auto* bn = dynamic_cast<nn::BatchNorm2dImpl*>(&m)) {
    const Tensor& t = bn->running_mean.defined() ? bn->running_mean : bn->weight;
    if (t.defined()) bn->num_features = t.meta().shape.sizes()[0];
  } else if (auto* ln = dynamic_cast<nn::LayerNormImpl*>(&m)) {
    if (ln->weight.defined()) ln->normalized_shape = ln->weight.meta().shape.sizes();
  } else if (auto* attention = dynamic_cast<nn::MultiheadAttentionImpl*>(&m)) {
    // Whole heads were cut: the head size stays.
    const std::int64_t d = attention->options.head_dim > 0 ? attention->options.head_dim
                                                           : attention->embed_dim / attention->num_heads;
    attention->options.head_dim = d;
    attention->num_heads = attention->in_proj_weight.meta().shape.sizes()[0] / (3 * d);
  }
}

}  // namespace

std::vector<std::int64_t> channels_to_keep(const Module& model, const ChannelGroup& group, double amount,
                                           PruneCriterion criterion, std::source_location where) {
  if (!(amount >= 0.0 && amount < 1.0)) throw_invalid_argument(where, "channels_to_keep(): amount {} is not in [0, 1)", amount);
  if (!group.prunable) throw_invalid_argument(where, "channels_to_keep(): the group cannot be pruned: {}", group.reason);
  std::vector<double> norm(static_cast<std::size_t>(group.channels), 0.0);
  bool any = false;
  for (const GroupMember& m : group.members) {
    if (m.role != ChannelRole::out) continue;
    any = true;
    // |t| with the member's dim first, one row per channel, summed along the rows.
    Tensor t = member_tensor(model, m, group, where).narrow(m.dim, m.offset, group.channels * group.width);
    t = criterion == PruneCriterion::l1 ? t.abs() : t * t;  // L2: the squared norm ranks the same
    if (m.dim != 0) t = t.transpose(0, m.dim);
    const std::vector<float> sums = t.contiguous().reshape({group.channels, -1}).sum({1}).to_vector<float>();
    for (std::size_t c = 0; c < norm.size(); ++c) norm[c] += static_cast<double>(sums[c]);
  }
  if (!any) throw_invalid_argument(where, "channels_to_keep(): the group has no layer output to rank its channels by");
  // A group cut alike in every block ranks the positions of a block by their norms summed
  // over the blocks.
  const std::int64_t block = group.period > 0 ? group.period : group.channels;
  if (block != group.channels) {
    for (std::size_t c = static_cast<std::size_t>(block); c < norm.size(); ++c) norm[c % static_cast<std::size_t>(block)] += norm[c];
    norm.resize(static_cast<std::size_t>(block));
  }
  std::vector<std::int64_t> order(norm.size());
  std::iota(order.begin(), order.end(), 0);
  // Smallest norm first; among equal norms the higher index first, so the lower one is kept.
  std::sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) {
    const double x = norm[static_cast<std::size_t>(a)];
    const double y = norm[static_cast<std::size_t>(b)];
    return x < y || (x == y && a > b);
  });
  const auto cut = static_cast<std::size_t>(amount * static_cast<double>(block));
  std::vector<std::int64_t> positions(order.begin() + static_cast<std::ptrdiff_t>(cut), order.end());
  std::sort(positions.begin(), positions.end());
  std::vector<std::int64_t> keep;
  keep.reserve(positions.size() * static_cast<std::size_t>(group.channels / block));
  for (std::int64_t first = 0; first < group.channels; first += block) {
    for (std::int64_t p : positions) keep.push_back(first + p);
  }
  return keep;
}

namespace {

// (tensor, dim) -> the ranges the selections cover: offset, channels, kept indices.
struct Range {
  std::int64_t offset, channels;
  const std::vector<std::int64_t>* keep;
  std::int64_t width;  ///< indices per channel
};
struct Cuts {
  std::map<std::pair<std::string, std::int64_t>, std::vector<Range>> ranges;
  std::map<std::string, Tensor> tensors;         ///< every member tensor, by path
  std::deque<std::vector<std::int64_t>> blocks;  ///< per member holding one block: its kept positions
};

/// The tensor of `group` that holds one block of its channels (a grouped convolution's weight).
std::string grouped_member(const ChannelGroup& group) {
  for (const GroupMember& m : group.members)
    if (m.period > 0) return m.tensor;
  return group.members.empty() ? std::string() : group.members.front().tensor;
}

/// Checks that a selection whose group has a period keeps the same positions in every block.
void check_same_in_every_block(const ChannelSelection& s, std::size_t k, const char* what, std::source_location where) {
  const std::int64_t period = s.group->period;
  if (period <= 0 || s.group->channels % period != 0) {
    throw_invalid_argument(where, "{}(): the group of selection {} has {} channels, not blocks of {}", what, k,
                           s.group->channels, period);
  }
  std::vector<std::int64_t> block;
  for (std::int64_t c : s.keep) {
    if (c < period) block.push_back(c);
  }
  const std::size_t n = block.size();
  bool same = s.keep.size() == n * static_cast<std::size_t>(s.group->channels / period);
  for (std::size_t i = 0; same && i < s.keep.size(); ++i) {
    same = s.keep[i] == static_cast<std::int64_t>(i / n) * period + block[i % n];
  }
  if (!same) {
    throw_invalid_argument(where,
                           "{}(): selection {} keeps other channels in one block of {} than in another: its group "
                           "is cut alike in every group of a grouped convolution ({})",
                           what, k, period, grouped_member(*s.group));
  }
}

// The selections checked (groups prunable, indices valid, no group twice, members present with
// the right sizes, no two groups on the same channels) and what each tensor's dims lose.
Cuts checked_cuts(const Module& model, std::span<const ChannelSelection> selections, const char* what,
                  std::source_location where) {
  Cuts out;
  auto& cuts = out.ranges;
  auto& tensors = out.tensors;
  std::set<const ChannelGroup*> seen;
  for (std::size_t k = 0; k < selections.size(); ++k) {
    const ChannelSelection& s = selections[k];
    if (s.group == nullptr) throw_invalid_argument(where, "{}(): selection {} has no group", what, k);
    if (!seen.insert(s.group).second) throw_invalid_argument(where, "{}(): selection {} repeats a group", what, k);
    if (!s.group->prunable) {
      throw_invalid_argument(where, "{}(): the group of selection {} cannot be pruned: {}", what, k, s.group->reason);
    }
    if (s.keep.empty()) throw_invalid_argument(where, "{}(): selection {} keeps no channel", what, k);
    for (std::size_t i = 0; i < s.keep.size(); ++i) {
      if (s.keep[i] < 0 || s.keep[i] >= s.group->channels || (i > 0 && s.keep[i] <= s.keep[i - 1])) {
        throw_invalid_argument(where,
                               "{}(): selection {} keeps channel {} at position {}: indices must increase "
                               "and lie in [0, {})",
                               what, k, s.keep[i], i, s.group->channels);
      }
    }
    if (s.group->period > 0 && s.group->period != s.group->channels) check_same_in_every_block(s, k, what, where);
    // A member holding one block of `m.period` channels (a multiple of the group's period, as
    // grouped convolutions of several widths share the channels) keeps the selection's
    // channels below m.period: the selection repeats every m.period channels too.
    std::map<std::int64_t, const std::vector<std::int64_t>*> member_blocks;
    for (const GroupMember& m : s.group->members) {
      tensors.try_emplace(m.tensor, member_tensor(model, m, *s.group, where));
      if (m.period > 0 && (s.group->period <= 0 || m.period % s.group->period != 0)) {
        throw_invalid_argument(where, "{}(): '{}' holds blocks of {} channels of a group cut in blocks of {}", what,
                               m.tensor, m.period, s.group->period);
      }
      const std::int64_t channels = extent(m, *s.group);
      const std::int64_t width = s.group->width;
      const std::vector<std::int64_t>* keep = &s.keep;
      if (m.period > 0) {
        auto [it, inserted] = member_blocks.try_emplace(m.period, nullptr);
        if (inserted) {
          std::vector<std::int64_t>& block = out.blocks.emplace_back();
          for (std::int64_t c : s.keep)
            if (c < m.period) block.push_back(c);
          it->second = &block;
        }
        keep = it->second;
      }
      std::vector<Range>& ranges = cuts[{m.tensor, m.dim}];
      for (const Range& r : ranges) {
        if (m.offset < r.offset + r.channels * r.width && r.offset < m.offset + channels * width && r.keep != keep) {
          throw_invalid_argument(where, "{}(): two groups cut the same channels of '{}' (dim {})", what, m.tensor, m.dim);
        }
      }
      if (std::none_of(ranges.begin(), ranges.end(), [&](const Range& r) { return r.keep == keep && r.offset == m.offset; })) {
        ranges.push_back(Range{m.offset, channels, keep, width});
      }
    }
  }
  return out;
}

}  // namespace

void prune_channels(Module& model, std::span<const ChannelSelection> selections, std::source_location where) {
  Cuts checked = checked_cuts(model, selections, "prune_channels", where);
  const auto& cuts = checked.ranges;
  auto& tensors = checked.tensors;
  // The new tensors, all computed before any replaces its original.
  std::map<std::string, Tensor> cut_tensors;
  for (const auto& [key, ranges] : cuts) {
    const auto& [path, dim] = key;
    auto it = cut_tensors.try_emplace(path, tensors.at(path)).first;
    const std::int64_t size = it->second.meta().shape.sizes()[static_cast<std::size_t>(dim)];
    std::vector<std::int64_t> index;
    for (std::int64_t i = 0; i < size;) {
      const auto r = std::find_if(ranges.begin(), ranges.end(), [&](const Range& x) { return x.offset == i; });
      if (r == ranges.end()) {
        index.push_back(i++);
        continue;
      }
      for (std::int64_t c : *r->keep)
        for (std::int64_t j = 0; j < r->width; ++j) index.push_back(i + c * r->width + j);
      i += r->channels * r->width;
    }
    it->second = it->second.index_select(dim, tensor(index, {static_cast<std::int64_t>(index.size())})).contiguous();
  }
  std::set<std::string> owners;
  for (const auto& [path, t] : cut_tensors) {
    tensors.at(path).set_(t);
    owners.insert(owner_of(path));
  }
  for (const std::string& owner : owners) update_layer(model.get_submodule(owner));
}

void mask_channels(Module& model, std::span<const ChannelSelection> selections, std::source_location where) {
  Cuts checked = checked_cuts(model, selections, "mask_channels", where);
  // The masked tensors, all computed before any replaces its original.
  std::map<std::string, Tensor> masked;
  for (const ChannelSelection& s : selections) {
    std::vector<bool> kept(static_cast<std::size_t>(s.group->channels), false);
    for (std::int64_t c : s.keep) kept[static_cast<std::size_t>(c)] = true;
    for (const GroupMember& m : s.group->members) {
      if (m.role != ChannelRole::in) continue;
      auto it = masked.find(m.tensor);
      if (it == masked.end()) {
        const Tensor& original = checked.tensors.at(m.tensor);
        it = masked.emplace(m.tensor, zeros_like(original).copy_(original)).first;
      }
      // A member holding one block (period) is read by every block: its positions are the
      // first block's, the same in all (checked_cuts).
      const std::int64_t width = s.group->width;
      for (std::int64_t c = 0; c < extent(m, *s.group); ++c)
        if (!kept[static_cast<std::size_t>(c)]) (void)it->second.narrow(m.dim, m.offset + c * width, width).fill_(0.0);
    }
  }
  for (const auto& [path, t] : masked) checked.tensors.at(path).set_(t);
}

}  // namespace symtrace
