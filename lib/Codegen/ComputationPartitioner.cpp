//===- ComputationPartitioner.cpp - Cut a fused computation into functions ===//
#include "tessel/Codegen/ComputationPartitioner.h"

#include "tessel/Indexing/HloIndexing.h"

#include <map>
#include <optional>
#include <set>

namespace tessel {

bool Subgraph::contains(const HloInstruction &instruction) const {
  return mapsOf(instruction) != nullptr;
}

const std::vector<IndexingMap> *
Subgraph::mapsOf(const HloInstruction &instruction) const {
  for (size_t i = 0; i < instructions.size(); ++i)
    if (instructions[i] == &instruction)
      return &maps[i];
  return nullptr;
}

const Subgraph *
PartitionedComputation::subgraphOf(const HloInstruction &instruction) const {
  if (instruction.parent() != computation || instruction.index() < 0 ||
      instruction.index() >= static_cast<int64_t>(subgraphIndex.size()))
    return nullptr;
  int64_t position = subgraphIndex[instruction.index()];
  return position < 0 ? nullptr : &subgraphs[position];
}

const Subgraph *PartitionedComputation::rootSubgraph() const {
  return computation && computation->root() ? subgraphOf(*computation->root())
                                            : nullptr;
}

namespace {

std::string name(const HloInstruction &instruction) {
  return "%" + instruction.name();
}

/// The affine part of a map, `(d0, d1) -> (d1, d0)`; the whole map when
/// `other` has the same affine part (they then differ in the domain).
std::string describeMap(const IndexingMap &map, const IndexingMap &other) {
  std::string text = map.toString();
  if (map.getAffineMap() == other.getAffineMap())
    return text;
  return text.substr(0, text.find(", domain:"));
}

std::string sanitizeSymbol(const std::string &text) {
  std::string result;
  for (char c : text) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              (c >= '0' && c <= '9') || c == '_';
    result += ok ? c : '_';
  }
  if (result.empty() || (result[0] >= '0' && result[0] <= '9'))
    result = "_" + result;
  return result;
}

/// "output 1" or "outputs 0, 2 and 3".
std::string describeOutputs(const std::vector<int64_t> &outputs) {
  std::string text = outputs.size() == 1 ? "output " : "outputs ";
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (i)
      text += i + 1 == outputs.size() ? " and " : ", ";
    text += std::to_string(outputs[i]);
  }
  return text;
}

/// One path reading an instruction: through `user`, at `map` from the root
/// of the user's subgraph.
struct Reading {
  const HloInstruction *user;
  IndexingMap map;
};

/// A subgraph while the partition is being built.
struct Draft {
  std::string name;
  const HloInstruction *root;
  std::string reason;
  /// Instructions other than constants.
  int64_t size = 1;
};

class Partitioner {
public:
  Partitioner(const HloComputation &computation, mlir::MLIRContext *context,
              const PartitionOptions &options)
      : computation(computation), context(context), options(options),
        count(computation.instructionCount()), draftOf(count, -1), mapOf(count),
        constantDrafts(count) {}

  Expected<PartitionedComputation> run();

private:
  Status check() const;
  /// Why `instruction` is a root whatever the maps (rules 2, 4 and the
  /// caller's choice), or nullopt.
  std::optional<std::string>
  whyForcedRoot(const HloInstruction &instruction) const;
  /// Why an instruction with users must start a subgraph, or nullopt when it
  /// joins `joinDraft` at `joinMap` (nullopt: no path reads it).
  std::optional<std::string> whyRoot(const HloInstruction &instruction,
                                     int64_t &joinDraft,
                                     std::optional<IndexingMap> &joinMap);
  /// The paths from `instruction`'s users to it, or why they cannot be
  /// known. Users read nowhere and known-empty maps are left out.
  Expected<std::vector<Reading>> readings(const HloInstruction &instruction);
  const Expected<HloInstructionIndexing> &
  indexingOf(const HloInstruction &user);
  void startDraft(const HloInstruction &root, std::string reason);
  void placeConstant(const HloInstruction &constant);
  PartitionedComputation assemble() const;

  const HloComputation &computation;
  mlir::MLIRContext *context;
  const PartitionOptions &options;
  int64_t count;
  /// Per instruction index: the draft computing it (-1: none or a constant
  /// placed by placeConstant) and its map from that draft's root.
  std::vector<int64_t> draftOf;
  std::vector<std::optional<IndexingMap>> mapOf;
  /// Per constant that is not a root: the drafts it is emitted in, with its
  /// maps in each.
  std::vector<std::map<int64_t, std::vector<IndexingMap>>> constantDrafts;
  std::vector<Draft> drafts;
  std::set<std::string> names;
  std::map<const HloInstruction *, Expected<HloInstructionIndexing>> indexing;
  /// Per instruction: the outputs of the ROOT tuple it is.
  std::map<const HloInstruction *, std::vector<int64_t>> tupleOutputs;
};

Status Partitioner::check() const {
  const HloInstruction *root = computation.root();
  if (!root)
    return Error("computation %" + computation.name() +
                 " has no instructions to partition");
  for (const std::unique_ptr<HloInstruction> &inst : computation.instructions())
    if (inst->opcode() == HloOpcode::Tuple && inst.get() != root)
      return errorAt(inst->location(),
                     "tuple " + name(*inst) +
                         " is not the ROOT; internal tuples are not supported");
  if (root->opcode() == HloOpcode::Tuple)
    for (int64_t k = 0; k < root->operandCount(); ++k)
      if (root->operand(k)->shape().isTuple())
        return errorAt(root->location(),
                       "output " + std::to_string(k) + " of the ROOT tuple " +
                           name(*root) + " is the tuple " +
                           name(*root->operand(k)) +
                           "; nested tuple outputs are not supported");
  return {};
}

const Expected<HloInstructionIndexing> &
Partitioner::indexingOf(const HloInstruction &user) {
  auto it = indexing.find(&user);
  if (it == indexing.end()) {
    Expected<HloInstructionIndexing> maps =
        computeOutputToInputIndexing(user, 0, context);
    // The partitioner needs every read: unknown indexing is no answer.
    if (maps && maps->hasUnknown())
      maps = Error(std::string(hloOpcodeName(user.opcode())) + " %" +
                   user.name() + ": no indexing maps for this op");
    it = indexing.emplace(&user, std::move(maps)).first;
  }
  return it->second;
}

Expected<std::vector<Reading>>
Partitioner::readings(const HloInstruction &instruction) {
  std::vector<Reading> result;
  for (const HloInstruction *user : instruction.users()) {
    const Expected<HloInstructionIndexing> &maps = indexingOf(*user);
    if (!maps)
      return Error(name(instruction) + " is read by " + name(*user) +
                   ", whose maps are unknown (" + maps.error().message + ")");
    const std::optional<IndexingMap> &userMap = mapOf[user->index()];
    if (!userMap)
      continue;
    for (int64_t k = 0; k < user->operandCount(); ++k) {
      if (user->operand(k) != &instruction ||
          k >= static_cast<int64_t>(maps->maps.size()))
        continue;
      const std::vector<IndexingMap> &slot = maps->maps[k];
      if (slot.size() > 1)
        return Error(name(instruction) + " is read at " +
                     std::to_string(slot.size()) +
                     " different indices through operand " + std::to_string(k) +
                     " of " + name(*user));
      if (slot.empty())
        continue;
      IndexingMap composed = composeIndexingMaps(*userMap, slot.front());
      composed.simplify();
      if (!composed.isKnownEmpty())
        result.push_back({user, std::move(composed)});
    }
  }
  return result;
}

std::optional<std::string>
Partitioner::whyForcedRoot(const HloInstruction &instruction) const {
  if (&instruction == computation.root())
    return std::string("root of the computation");
  auto outputs = tupleOutputs.find(&instruction);
  if (outputs != tupleOutputs.end())
    return describeOutputs(outputs->second) + " of the ROOT tuple";
  if (options.isSubgraphRoot && options.isSubgraphRoot(instruction))
    return options.rootReason.empty()
               ? std::string("a root by the caller's choice")
               : options.rootReason;
  if (instruction.users().empty())
    return name(instruction) + " has no users";
  return std::nullopt;
}

std::optional<std::string>
Partitioner::whyRoot(const HloInstruction &instruction, int64_t &joinDraft,
                     std::optional<IndexingMap> &joinMap) {
  const HloInstruction *firstUser = instruction.users().front();
  joinDraft = draftOf[firstUser->index()];
  for (const HloInstruction *user : instruction.users()) {
    int64_t draft = draftOf[user->index()];
    if (draft < 0 || joinDraft < 0)
      return name(instruction) + " is read by " + name(*user) +
             ", which is in no function";
    if (draft != joinDraft)
      return name(instruction) + " is read by " + name(*firstUser) + " in @" +
             drafts[joinDraft].name + " and by " + name(*user) + " in @" +
             drafts[draft].name;
  }

  Expected<std::vector<Reading>> paths = readings(instruction);
  if (!paths)
    return paths.error().message;
  for (const Reading &path : *paths) {
    const Reading &first = paths->front();
    if (path.map != first.map)
      return name(instruction) + " is read at " +
             describeMap(first.map, path.map) + " by " + name(*first.user) +
             " and at " + describeMap(path.map, first.map) + " by " +
             name(*path.user);
  }

  const Draft &draft = drafts[joinDraft];
  if (options.maxInstructionsPerSubgraph > 0 &&
      draft.size >= options.maxInstructionsPerSubgraph)
    return "@" + draft.name + " already has " + std::to_string(draft.size) +
           " instructions, the most per function";
  if (!paths->empty())
    joinMap = paths->front().map;
  return std::nullopt;
}

void Partitioner::startDraft(const HloInstruction &root, std::string reason) {
  std::string base = sanitizeSymbol(computation.name() + "_" + root.name());
  std::string unique = base;
  for (int suffix = 1; names.count(unique); ++suffix)
    unique = base + "_" + std::to_string(suffix);
  names.insert(unique);
  draftOf[root.index()] = static_cast<int64_t>(drafts.size());
  if (const Shape *shape = getOutputShape(root, 0))
    mapOf[root.index()] = IndexingMap::identity(context, shape->dims);
  drafts.push_back({unique, &root, std::move(reason)});
}

void Partitioner::placeConstant(const HloInstruction &constant) {
  std::map<int64_t, std::vector<IndexingMap>> &placed =
      constantDrafts[constant.index()];
  for (const HloInstruction *user : constant.users()) {
    int64_t draft = draftOf[user->index()];
    if (draft < 0)
      continue;
    std::vector<IndexingMap> &maps = placed[draft];
    const Expected<HloInstructionIndexing> &userMaps = indexingOf(*user);
    const std::optional<IndexingMap> &userMap = mapOf[user->index()];
    if (!userMaps || !userMap)
      continue;
    for (int64_t k = 0; k < user->operandCount() &&
                        k < static_cast<int64_t>(userMaps->maps.size());
         ++k) {
      if (user->operand(k) != &constant)
        continue;
      for (const IndexingMap &slotMap : userMaps->maps[k]) {
        IndexingMap composed = composeIndexingMaps(*userMap, slotMap);
        composed.simplify();
        bool seen = composed.isKnownEmpty();
        for (const IndexingMap &existing : maps)
          seen = seen || existing == composed;
        if (!seen)
          maps.push_back(std::move(composed));
      }
    }
  }
}

Expected<PartitionedComputation> Partitioner::run() {
  if (Status problem = check(); !problem)
    return problem.takeError();
  const HloInstruction *root = computation.root();
  bool tupleRoot = root->opcode() == HloOpcode::Tuple;
  if (tupleRoot)
    for (int64_t k = 0; k < root->operandCount(); ++k)
      tupleOutputs[root->operand(k)].push_back(k);

  for (int64_t i = count; i-- > 0;) {
    const HloInstruction &inst = *computation.instructions()[i];
    if (inst.opcode() == HloOpcode::Parameter || (tupleRoot && &inst == root))
      continue;
    int64_t joinDraft = -1;
    std::optional<IndexingMap> joinMap;
    std::optional<std::string> reason = whyForcedRoot(inst);
    if (!reason && inst.opcode() == HloOpcode::Constant) {
      placeConstant(inst);
      continue;
    }
    if (!reason)
      reason = whyRoot(inst, joinDraft, joinMap);
    if (reason) {
      startDraft(inst, std::move(*reason));
    } else {
      draftOf[i] = joinDraft;
      mapOf[i] = std::move(joinMap);
      ++drafts[joinDraft].size;
    }
  }
  return assemble();
}

PartitionedComputation Partitioner::assemble() const {
  PartitionedComputation result;
  result.computation = &computation;
  int64_t n = static_cast<int64_t>(drafts.size());
  // Drafts were started callers first; list them callees first.
  auto positionOf = [n](int64_t draft) { return n - 1 - draft; };
  result.subgraphs.resize(n);
  for (int64_t d = 0; d < n; ++d) {
    Subgraph &subgraph = result.subgraphs[positionOf(d)];
    subgraph.name = drafts[d].name;
    subgraph.roots = {drafts[d].root};
    subgraph.reason = drafts[d].reason;
  }
  result.subgraphIndex.assign(count, -1);
  for (int64_t i = 0; i < count; ++i) {
    const HloInstruction *inst = computation.instructions()[i].get();
    if (draftOf[i] >= 0) {
      int64_t position = positionOf(draftOf[i]);
      result.subgraphIndex[i] = position;
      Subgraph &subgraph = result.subgraphs[position];
      subgraph.instructions.push_back(inst);
      subgraph.maps.emplace_back();
      if (mapOf[i])
        subgraph.maps.back().push_back(*mapOf[i]);
    }
    for (const auto &[draft, maps] : constantDrafts[i]) {
      Subgraph &subgraph = result.subgraphs[positionOf(draft)];
      subgraph.instructions.push_back(inst);
      subgraph.maps.push_back(maps);
    }
  }
  return result;
}

/// `%add = add(%log, @fused_exp, %param)`: operands in the same subgraph
/// and parameters by name, roots of other subgraphs by function.
std::string describeInstruction(const PartitionedComputation &partition,
                                const Subgraph &subgraph,
                                const HloInstruction &instruction) {
  std::string text = name(instruction) + " = " +
                     std::string(hloOpcodeName(instruction.opcode())) + "(";
  if (instruction.opcode() == HloOpcode::Constant) {
    std::string value = instruction.literal().toString();
    return text + (value.size() <= 40 ? value : "{...}") + ")";
  }
  for (int64_t k = 0; k < instruction.operandCount(); ++k) {
    const HloInstruction &operand = *instruction.operand(k);
    // Parameters and inlined constants have no subgraph of their own.
    const Subgraph *callee = partition.subgraphOf(operand);
    if (k)
      text += ", ";
    text += !callee || callee == &subgraph ? name(operand) : "@" + callee->name;
  }
  return text + ")";
}

} // namespace

std::string PartitionedComputation::toString() const {
  if (!computation)
    return "empty partition\n";
  std::string text = "partition of %" + computation->name() + ": " +
                     std::to_string(subgraphs.size()) +
                     (subgraphs.size() == 1 ? " function\n" : " functions\n");
  const HloInstruction *root = computation->root();
  if (root && root->opcode() == HloOpcode::Tuple) {
    text += "ROOT tuple " + name(*root) + " returns (";
    for (int64_t k = 0; k < root->operandCount(); ++k) {
      const Subgraph *output = subgraphOf(*root->operand(k));
      text += (k ? ", " : "") +
              (output ? "@" + output->name : name(*root->operand(k)));
    }
    text += ")\n";
  }
  for (const Subgraph &subgraph : subgraphs) {
    text += "function @" + subgraph.name + " returns";
    for (const HloInstruction *root : subgraph.roots)
      text += " " + name(*root);
    text += "\n  why: " + subgraph.reason + "\n";
    for (size_t i = 0; i < subgraph.instructions.size(); ++i) {
      const HloInstruction &inst = *subgraph.instructions[i];
      bool isRoot = false;
      for (const HloInstruction *root : subgraph.roots)
        isRoot = isRoot || root == &inst;
      text += std::string("  ") + (isRoot ? "ROOT " : "") +
              describeInstruction(*this, subgraph, inst) + " ";
      const std::vector<IndexingMap> &maps = subgraph.maps[i];
      if (maps.empty())
        text += " read nowhere";
      for (size_t m = 0; m < maps.size(); ++m)
        text += (m ? "; at " : " at ") + maps[m].toString();
      text += "\n";
    }
  }
  return text;
}

Expected<PartitionedComputation>
partitionComputation(const HloComputation &computation,
                     mlir::MLIRContext *context,
                     const PartitionOptions &options) {
  return Partitioner(computation, context, options).run();
}

} // namespace tessel
