//===- Weights.cpp - checkpoint tensors bound to weight globals -----------===//

#include "TxDialect/Conversion/TxToLinalg.h"
#include "TxDialect/CheckpointLayout.h"
#include "TxDialect/Execution/Weights.h"
#include "TxDialect/Execution/Npy.h"
#include "TxDialect/TxOps.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <cmath>

using namespace mlir;
using namespace mlir::tx;
using llvm::createStringError;

/// Pieces of a global of `rows` rows: one per stacking entry
/// (`<source><suffix>`), or the whole of `tensor`.
static std::vector<WeightPiece> piecesOf(StringRef tensor, int64_t rows,
                                         ArrayAttr stacking,
                                         StringRef suffix) {
  if (!stacking)
    return {WeightPiece{tensor.str(), 0, rows}};
  std::vector<WeightPiece> pieces;
  for (auto e : stacking.getAsRange<StackEntryAttr>())
    pieces.push_back(WeightPiece{(e.getSource().getValue() + suffix).str(),
                                 e.getOffset(), e.getSize()});
  return pieces;
}

static llvm::Error unsupported(StringRef what, Type t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << t;
  return createStringError(std::errc::not_supported,
                           "%s has element type %s; the CPU runner binds "
                           "f32, f16 and bf16 weights",
                           what.str().c_str(), s.c_str());
}

llvm::Expected<std::vector<WeightBinding>>
tx::collectWeightBindings(ModuleOp module) {
  std::vector<WeightBinding> out;
  for (Operation &op : *module.getBody()) {
    if (auto layer = dyn_cast<LayerOp>(op)) {
      std::optional<ElementType> element = runnerElementType(layer.getDtype());
      if (!element)
        return unsupported("layer '" + layer.getSymName().str() + "'",
                           layer.getDtype());
      std::string prefix = layer.getCheckpointPrefix().str();
      ArrayAttr stacking = layer.getStacking() ? *layer.getStacking()
                                               : ArrayAttr();
      int64_t rows = layer.getOutFeatures(), cols = layer.getInFeatures();
      out.push_back({getWeightGlobalName(layer.getSymName()),
                     {rows, cols},
                     piecesOf(prefix + ".weight", rows, stacking, ".weight"),
                     *element,
                     layer->hasAttr(kCheckpointTransposedAttrName)});
      if (layer.getBias())
        out.push_back({getBiasGlobalName(layer.getSymName()),
                       {rows},
                       piecesOf(prefix + ".bias", rows, stacking, ".bias"),
                       *element});
    } else if (auto param = dyn_cast<ParamOp>(op)) {
      auto type = cast<MemRefType>(param.getType());
      std::optional<ElementType> element =
          runnerElementType(type.getElementType());
      if (!element)
        return unsupported("parameter '" + param.getSymName().str() + "'",
                           type.getElementType());
      std::vector<int64_t> shape(type.getShape());
      int64_t rows = shape.empty() ? 1 : shape[0];
      out.push_back({getParamGlobalName(param.getSymName()), shape,
                     piecesOf(param.getCheckpointName(), rows, {}, ""),
                     *element});
    } else if (auto global = dyn_cast<memref::GlobalOp>(op)) {
      // An already lowered module: globals tagged by tx-to-linalg.
      auto ckpt = global->getAttrOfType<StringAttr>(kCheckpointAttrName);
      if (!ckpt)
        continue;
      MemRefType type = global.getType();
      std::optional<ElementType> element =
          runnerElementType(type.getElementType());
      if (!element)
        return unsupported("global '" + global.getSymName().str() + "'",
                           type.getElementType());
      std::vector<int64_t> shape(type.getShape());
      int64_t rows = shape.empty() ? 1 : shape[0];
      StringRef suffix =
          ckpt.getValue().ends_with(".bias") ? ".bias" : ".weight";
      out.push_back({global.getSymName().str(), shape,
                     piecesOf(ckpt.getValue(), rows,
                              global->getAttrOfType<ArrayAttr>(
                                  kStackingAttrName),
                              suffix),
                     *element,
                     global->hasAttr(kCheckpointTransposedAttrName)});
    }
  }
  return out;
}

llvm::Error tx::openWeightSource(const WeightSource &source) {
  StringRef path = source.path;
  if (path.empty() || source.checkpoint)
    return llvm::Error::success();
  if (!llvm::sys::fs::exists(path))
    return createStringError(std::errc::no_such_file_or_directory,
                             "weights '%s' not found", source.path.c_str());
  bool isDirectory = llvm::sys::fs::is_directory(path);
  if (isDirectory && SafetensorsCheckpoint::findInDirectory(path).empty())
    return llvm::Error::success(); // a directory of .npy files
  if (!isDirectory && !path.ends_with(".safetensors") &&
      !path.ends_with(".json"))
    return createStringError(
        std::errc::invalid_argument,
        "weights '%s' is neither a directory (of <tensor>.npy files, or "
        "holding model.safetensors[.index.json]) nor a .safetensors file "
        "nor a .safetensors.index.json",
        source.path.c_str());
  auto opened = SafetensorsCheckpoint::open(path);
  if (!opened)
    return opened.takeError();
  source.checkpoint = std::move(*opened);
  return llvm::Error::success();
}

/// Checkpoint tensor `name` of `shape` from the directory of .npy files
/// `directory`.
static llvm::Expected<Tensor> readNpyWeight(StringRef directory,
                                            const std::string &name,
                                            const std::vector<int64_t> &shape) {
  llvm::SmallString<256> path(directory);
  llvm::sys::path::append(path, name + ".npy");
  if (!llvm::sys::fs::exists(path))
    return createStringError(
        std::errc::no_such_file_or_directory,
        "missing weight file for checkpoint tensor '%s' (expected %s)",
        name.c_str(), path.c_str());
  llvm::Expected<Tensor> read = readNpy(path);
  if (!read)
    return read.takeError();
  if (read->shape != shape)
    return createStringError(std::errc::invalid_argument,
                             "checkpoint tensor '%s' has shape %s, expected %s",
                             name.c_str(), read->typeString().c_str(),
                             Tensor(shape, {}).typeString().c_str());
  return read;
}

/// Checkpoint tensor `name` of `shape` from `source`: its safetensors
/// checkpoint, its directory of .npy files, or generated from its seed when
/// it names no path.
static llvm::Expected<Tensor> readSourceTensor(const WeightSource &source,
                                               const std::string &name,
                                               const std::vector<int64_t> &shape) {
  if (source.path.empty())
    return defaultCheckpointTensor(name, shape, source.seed);
  if (source.checkpoint)
    return source.checkpoint->read(name, shape);
  return readNpyWeight(source.path, name, shape);
}

/// Piece `piece` of a transposed binding as the global's rows: the
/// checkpoint tensor (or .npy file, or seeded tensor) of shape [cols, rows]
/// read and transposed to [rows, cols].
static llvm::Expected<Tensor> readTransposedPiece(const WeightBinding &binding,
                                                  const WeightPiece &piece,
                                                  const WeightSource &source) {
  if (binding.shape.size() != 2)
    return createStringError(std::errc::invalid_argument,
                             "weight '%s' is marked %s but is not 2-D",
                             binding.global.c_str(),
                             kCheckpointTransposedAttrName.data());
  int64_t rows = piece.rows, cols = binding.shape[1];
  std::vector<int64_t> stored = {cols, rows};
  llvm::Expected<Tensor> read = readSourceTensor(source, piece.tensor, stored);
  if (!read)
    return createStringError(
        std::errc::invalid_argument,
        "%s (the layer's weight is stored transposed, [in_features, "
        "out_features] = [%lld, %lld], as GPT-2's Conv1D)",
        llvm::toString(read.takeError()).c_str(),
        static_cast<long long>(cols), static_cast<long long>(rows));
  const Tensor &t = *read;
  Tensor out({rows, cols}, std::vector<float>(t.data.size()));
  for (int64_t c = 0; c < cols; ++c)
    for (int64_t r = 0; r < rows; ++r)
      out.data[r * cols + c] = t.data[c * rows + r];
  return out;
}

llvm::Expected<std::vector<float>> tx::loadWeight(const WeightBinding &binding,
                                                  const WeightSource &source) {
  if (llvm::Error e = openWeightSource(source))
    return std::move(e);
  int64_t total = Tensor::numElements(binding.shape);
  int64_t rows = binding.shape.empty() ? 1 : binding.shape[0];
  int64_t rowSize = rows ? total / rows : 0;
  std::vector<float> data(total);
  for (const WeightPiece &piece : binding.pieces) {
    std::vector<int64_t> shape = binding.shape;
    if (!shape.empty())
      shape[0] = piece.rows;
    llvm::Expected<Tensor> t =
        binding.transposed ? readTransposedPiece(binding, piece, source)
                           : readSourceTensor(source, piece.tensor, shape);
    if (!t)
      return t.takeError();
    std::copy(t->data.begin(), t->data.end(),
              data.begin() + piece.rowOffset * rowSize);
  }
  return data;
}

llvm::Error tx::loadWeightInto(const WeightBinding &binding,
                               const WeightSource &source, void *dest) {
  if (llvm::Error e = openWeightSource(source))
    return e;
  int64_t total = Tensor::numElements(binding.shape);
  int64_t rows = binding.shape.empty() ? 1 : binding.shape[0];
  int64_t rowSize = rows ? total / rows : 0;
  size_t width = elementBytes(binding.element);
  for (const WeightPiece &piece : binding.pieces) {
    std::vector<int64_t> shape = binding.shape;
    if (!shape.empty())
      shape[0] = piece.rows;
    char *at = static_cast<char *>(dest) + piece.rowOffset * rowSize * width;
    if (binding.transposed) {
      // Read and transposed one checkpoint tensor at a time.
      llvm::Expected<Tensor> t = readTransposedPiece(binding, piece, source);
      if (!t)
        return t.takeError();
      storeElements(t->data.data(), t->data.size(), binding.element, at);
      continue;
    }
    if (!source.path.empty() && source.checkpoint) {
      if (llvm::Error e = source.checkpoint->readInto(piece.tensor, shape,
                                                      binding.element, at))
        return e;
      continue;
    }
    if (!source.path.empty() && binding.element == ElementType::F32) {
      // f32 .npy data: read straight into the global.
      llvm::SmallString<256> path(source.path);
      llvm::sys::path::append(path, piece.tensor + ".npy");
      if (!llvm::sys::fs::exists(path))
        return createStringError(
            std::errc::no_such_file_or_directory,
            "missing weight file for checkpoint tensor '%s' (expected %s)",
            piece.tensor.c_str(), path.c_str());
      llvm::Expected<std::vector<int64_t>> read =
          readNpyInto(path, [&](const std::vector<int64_t> &fileShape) {
            return fileShape == shape ? reinterpret_cast<float *>(at) : nullptr;
          });
      if (!read)
        return read.takeError();
      if (*read != shape)
        return createStringError(
            std::errc::invalid_argument,
            "checkpoint tensor '%s' has shape %s, expected %s",
            piece.tensor.c_str(), Tensor(*read, {}).typeString().c_str(),
            Tensor(shape, {}).typeString().c_str());
      continue;
    }
    // Seeded tensors, and .npy data rounded to f16/bf16.
    llvm::Expected<Tensor> t = readSourceTensor(source, piece.tensor, shape);
    if (!t)
      return t.takeError();
    storeElements(t->data.data(), t->data.size(), binding.element, at);
  }
  return llvm::Error::success();
}

Tensor tx::defaultCheckpointTensor(StringRef name, std::vector<int64_t> shape,
                                   uint64_t seed) {
  Tensor t = randomTensor(name, shape, seed);
  if (shape.size() >= 2) {
    float s = 1.0f / std::sqrt(static_cast<float>(shape.back()));
    for (float &v : t.data)
      v *= s;
  } else if (name.ends_with(".bias")) {
    for (float &v : t.data)
      v *= 0.1f;
  } else {
    for (float &v : t.data)
      v = 1.0f + 0.1f * v;
  }
  return t;
}
