//===- StackingMaps.cpp - stacking maps for weight loaders ----------------===//

#include "TxDialect/Diagnostics.h"
#include "TxDialect/Transforms/StackingMaps.h"
#include "TxDialect/Transforms/FusionPasses.h"

#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/ToolOutputFile.h"

namespace mlir {
namespace tx {
#define GEN_PASS_DEF_TXEXPORTSTACKINGMAPS
#include "TxDialect/Transforms/FusionPasses.h.inc"
} // namespace tx
} // namespace mlir

using namespace mlir;
using namespace mlir::tx;

namespace {
/// Rows `[begin, end)` of one original that go to one rank.
struct RankPart {
  StackEntryAttr entry;
  int64_t begin, end;
};
} // namespace

/// Whether `entry` can be sharded over `tpSize` ranks without splitting a
/// head: rows divide over the ranks and heads too, or fewer heads than ranks
/// replicate evenly; a part of unknown heads only unsharded. A diagnostic on
/// `layer` otherwise.
static LogicalResult checkShardable(LayerOp layer, StackEntryAttr entry,
                                    int64_t tpSize) {
  int64_t size = entry.getSize(), heads = entry.getHeads();
  StringRef src = entry.getSource().getValue();
  if (tpSize == 1)
    return success();
  if (entry.getUnknownHeads())
    return layer.emitError()
           << "'" << src << "' is made of attention heads of unknown count: "
           << "its " << size << " rows cannot be sharded over " << tpSize
           << " ranks without risking a split head (fuse with q-heads/"
              "kv-heads or a `heads` attribute on the layer)";
  if (heads > 0 && heads < tpSize) {
    // Fewer heads than ranks (GQA KV heads): each head is replicated on
    // tpSize / heads consecutive ranks.
    if (tpSize % heads != 0 || size % heads != 0)
      return layer.emitError()
             << "'" << src << "': " << heads
             << " heads cannot be replicated evenly over " << tpSize
             << " ranks with " << size << " rows";
    return success();
  }
  if (size % tpSize != 0)
    return layer.emitError() << "'" << src << "': " << size
                             << " rows do not divide over " << tpSize
                             << " ranks";
  if (heads > 0 && heads % tpSize != 0)
    return layer.emitError() << "'" << src << "': " << heads
                             << " heads do not divide over " << tpSize
                             << " ranks";
  return success();
}

/// The rows of a shardable `entry` on `rank` of `tpSize`.
static RankPart rankRows(StackEntryAttr entry, int64_t rank, int64_t tpSize) {
  int64_t size = entry.getSize(), heads = entry.getHeads();
  if (heads > 0 && heads < tpSize) {
    int64_t h = rank / (tpSize / heads), rows = size / heads;
    return RankPart{entry, h * rows, (h + 1) * rows};
  }
  int64_t rows = size / tpSize;
  return RankPart{entry, rank * rows, (rank + 1) * rows};
}

LogicalResult tx::exportStackingMaps(ModuleOp module, int64_t tpSize,
                                     llvm::raw_ostream &os) {
  if (tpSize < 1)
    return emitErrorAt(module) << "tensor-parallel size must be positive, got "
                              << tpSize;
  // The JSON lists every rank: a size no deployment has is a mistake, not
  // gigabytes of output.
  if (tpSize > kMaxStackingTPSize)
    return emitErrorAt(module) << "tensor-parallel size " << tpSize
                              << " is larger than " << kMaxStackingTPSize;
  // Built in memory first so that a failure writes nothing.
  std::string text;
  llvm::raw_string_ostream buffer(text);
  llvm::json::OStream json(buffer);
  bool ok = true;
  json.object([&] {
    json.attribute("tp_size", tpSize);
    json.attributeArray("layers", [&] {
      module.walk([&](LayerOp layer) {
        std::optional<ArrayAttr> stacking = layer.getStacking();
        if (!stacking || !ok)
          return;
        auto entries = llvm::to_vector(stacking->getAsRange<StackEntryAttr>());
        SmallVector<std::string> suffixes = {".weight"};
        if (layer.getBias())
          suffixes.push_back(".bias");
        // Every part checked first, so that an error leaves no half layer.
        for (StackEntryAttr e : entries)
          if (failed(checkShardable(layer, e, tpSize))) {
            ok = false;
            return;
          }
        SmallVector<SmallVector<RankPart>> ranks(tpSize);
        for (int64_t r = 0; r < tpSize; ++r)
          for (StackEntryAttr e : entries)
            ranks[r].push_back(rankRows(e, r, tpSize));
        json.object([&] {
          json.attribute("name", layer.getSymName());
          json.attribute("in_features",
                         static_cast<int64_t>(layer.getInFeatures()));
          json.attribute("out_features",
                         static_cast<int64_t>(layer.getOutFeatures()));
          json.attribute("bias", static_cast<bool>(layer.getBias()));
          json.attributeArray("tensors", [&] {
            for (StackEntryAttr e : entries)
              for (const std::string &suffix : suffixes)
                json.object([&] {
                  json.attribute("tensor",
                                 (e.getSource().getValue() + suffix).str());
                  json.attribute("source", e.getSource().getValue());
                  json.attribute("heads", e.getHeads());
                  if (e.getUnknownHeads())
                    json.attribute("unknown_heads", true);
                  json.attributeArray("rows", [&] {
                    json.value(e.getOffset());
                    json.value(e.getOffset() + e.getSize());
                  });
                });
          });
          json.attributeArray("ranks", [&] {
            for (int64_t r = 0; r < tpSize; ++r)
              json.object([&] {
                json.attribute("rank", r);
                int64_t offset = 0;
                json.attributeArray("parts", [&] {
                  for (const RankPart &p : ranks[r])
                    json.object([&] {
                      json.attribute("source", p.entry.getSource().getValue());
                      json.attributeArray("rows", [&] {
                        json.value(p.begin);
                        json.value(p.end);
                      });
                      json.attribute("offset", offset);
                      offset += p.end - p.begin;
                    });
                });
                json.attribute("rows", offset);
              });
          });
        });
      });
    });
  });
  if (!ok)
    return failure();
  os << text << "\n";
  return success();
}

namespace {
struct ExportStackingMapsPass
    : public tx::impl::TxExportStackingMapsBase<ExportStackingMapsPass> {
  using TxExportStackingMapsBase::TxExportStackingMapsBase;

  void runOnOperation() override {
    std::string error;
    std::unique_ptr<llvm::ToolOutputFile> file =
        openOutputFile(output, &error);
    if (!file) {
      emitErrorAt(getOperation()) << "cannot open '" << output
                                 << "': " << error;
      return signalPassFailure();
    }
    if (failed(exportStackingMaps(getOperation(), tpSize, file->os())))
      return signalPassFailure();
    file->keep();
    markAllAnalysesPreserved();
  }
};
} // namespace
