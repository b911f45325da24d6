//===- Safetensors.cpp - safetensors checkpoints --------------------------===//
//
// https://github.com/huggingface/safetensors: the header is JSON, read with
// llvm::json; the data is mapped (MemoryBuffer) and converted on read.
//
//===----------------------------------------------------------------------===//

#include "TxDialect/Execution/Safetensors.h"
#include "TxDialect/Execution/Elements.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cstring>

using namespace mlir;
using namespace mlir::tx;
using llvm::createStringError;
using llvm::StringRef;
using llvm::Twine;

static llvm::Error error(StringRef path, const Twine &why) {
  return createStringError(std::errc::invalid_argument, "'%s': %s",
                           path.str().c_str(), why.str().c_str());
}

/// "4x3" ("[]" for a scalar).
static std::string shapeString(const std::vector<int64_t> &shape) {
  if (shape.empty())
    return "[]";
  std::string s;
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? "x" : "") + std::to_string(shape[i]);
  return s;
}

/// Bytes per element of a safetensors dtype; 0 for a name it does not have.
static uint64_t dtypeBytes(StringRef dtype) {
  return llvm::StringSwitch<uint64_t>(dtype)
      .Cases("F64", "I64", "U64", 8)
      .Cases("F32", "I32", "U32", 4)
      .Cases("F16", "BF16", "I16", "U16", 2)
      .Cases("I8", "U8", "BOOL", "F8_E4M3", "F8_E5M2", 1)
      .Default(0);
}

/// A non-negative integer of a JSON value.
static std::optional<uint64_t> asCount(const llvm::json::Value &v) {
  std::optional<int64_t> i = v.getAsInteger();
  if (!i || *i < 0)
    return std::nullopt;
  return static_cast<uint64_t>(*i);
}

llvm::Expected<std::unique_ptr<SafetensorsFile>>
SafetensorsFile::open(StringRef path) {
  auto buf = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                         /*RequiresNullTerminator=*/false);
  if (!buf)
    return createStringError(buf.getError(), "cannot read '%s': %s",
                             path.str().c_str(),
                             buf.getError().message().c_str());
  auto file = std::unique_ptr<SafetensorsFile>(new SafetensorsFile());
  file->filePath = path.str();
  file->buffer = std::move(*buf);
  StringRef bytes = file->buffer->getBuffer();
  if (bytes.size() < 8)
    return error(path, "not a safetensors file: " + Twine(bytes.size()) +
                           " bytes, fewer than the 8 of the header length");
  uint64_t headerLen =
      llvm::support::endian::read64le(bytes.data());
  if (headerLen > bytes.size() - 8)
    return error(path, "header length " + Twine(headerLen) +
                           " runs past the end of the file (" +
                           Twine(bytes.size()) +
                           " bytes): truncated, or not a safetensors file");
  StringRef headerText = bytes.substr(8, headerLen);
  file->data = bytes.drop_front(8 + headerLen);
  llvm::Expected<llvm::json::Value> header = llvm::json::parse(headerText);
  if (!header)
    return error(path, "header is not JSON: " +
                           llvm::toString(header.takeError()));
  const llvm::json::Object *top = header->getAsObject();
  if (!top)
    return error(path, "header is not a JSON object");

  for (const auto &[key, value] : *top) {
    StringRef name = key;
    if (name == "__metadata__") {
      if (!value.getAsObject())
        return error(path, "\"__metadata__\" is not a JSON object");
      continue;
    }
    auto bad = [&](const Twine &why) {
      return error(path, "tensor '" + name + "': " + why);
    };
    const llvm::json::Object *info = value.getAsObject();
    if (!info)
      return bad("header entry is not a JSON object");
    SafetensorsEntry entry;
    std::optional<StringRef> dtype = info->getString("dtype");
    if (!dtype)
      return bad("no \"dtype\" string in the header");
    entry.dtype = dtype->str();
    const llvm::json::Array *shape = info->getArray("shape");
    if (!shape)
      return bad("no \"shape\" array in the header");
    for (const llvm::json::Value &d : *shape) {
      std::optional<uint64_t> n = asCount(d);
      if (!n)
        return bad("\"shape\" holds something other than sizes >= 0");
      entry.shape.push_back(static_cast<int64_t>(*n));
    }
    const llvm::json::Array *offsets = info->getArray("data_offsets");
    std::optional<uint64_t> begin, end;
    if (offsets && offsets->size() == 2) {
      begin = asCount((*offsets)[0]);
      end = asCount((*offsets)[1]);
    }
    if (!begin || !end)
      return bad("\"data_offsets\" is not a pair [begin, end] of offsets");
    entry.begin = *begin;
    entry.end = *end;
    std::string range =
        "data_offsets [" + std::to_string(*begin) + ", " + std::to_string(*end) +
        "]";
    if (*begin > *end)
      return bad(range + " are inverted (begin after end)");
    if (*end > file->data.size())
      return bad(range + " run past the end of the data (" +
                 Twine(file->data.size()) +
                 " bytes after the header): the file is truncated");
    if (uint64_t size = dtypeBytes(entry.dtype)) {
      std::optional<int64_t> count = Tensor::checkedNumElements(entry.shape);
      if (!count)
        return bad("shape " + shapeString(entry.shape) + " is too large");
      if (uint64_t(*count) * size != *end - *begin)
        return bad("shape " + shapeString(entry.shape) + " of " +
                   entry.dtype + " needs " + Twine(uint64_t(*count) * size) +
                   " bytes, but " + range + " span " + Twine(*end - *begin));
    }
    file->entries[name] = std::move(entry);
  }

  // Tensors may not share bytes, and together they cover the data exactly,
  // as the format requires (its reference reader refuses anything else): a
  // header length off by a few bytes still parses when the header is padded
  // with spaces, and would shift every tensor's bytes.
  std::vector<const llvm::StringMapEntry<SafetensorsEntry> *> byOffset;
  for (const auto &e : file->entries)
    if (e.second.end > e.second.begin)
      byOffset.push_back(&e);
  llvm::sort(byOffset, [](auto *a, auto *b) {
    return std::make_pair(a->second.begin, a->first()) <
           std::make_pair(b->second.begin, b->first());
  });
  auto where = [](const llvm::StringMapEntry<SafetensorsEntry> *e) {
    return "'" + e->first().str() + "' [" + std::to_string(e->second.begin) +
           ", " + std::to_string(e->second.end) + "]";
  };
  uint64_t covered = 0;
  for (size_t i = 0; i < byOffset.size(); ++i) {
    // `covered` is the previous tensor's end (0 before the first).
    if (byOffset[i]->second.begin < covered)
      return error(path, "the data_offsets of tensors " +
                             where(byOffset[i - 1]) + " and " +
                             where(byOffset[i]) + " overlap");
    if (byOffset[i]->second.begin > covered)
      return error(path, "bytes [" + Twine(covered) + ", " +
                             Twine(byOffset[i]->second.begin) +
                             ") of the data belong to no tensor (before " +
                             where(byOffset[i]) +
                             "): the tensors must cover the data without "
                             "gaps; a wrong header length or offsets");
    covered = byOffset[i]->second.end;
  }
  if (covered != file->data.size())
    return error(path, "the data after the header holds " +
                           Twine(file->data.size()) +
                           " bytes, the tensors end at byte " + Twine(covered) +
                           ": the tensors must cover the data exactly; a "
                           "wrong header length or offsets, or bytes appended");
  return file;
}

const SafetensorsEntry *SafetensorsFile::find(StringRef name) const {
  auto it = entries.find(name);
  return it == entries.end() ? nullptr : &it->second;
}

std::vector<std::string> SafetensorsFile::names() const {
  std::vector<std::string> out;
  for (const auto &e : entries)
    out.push_back(e.first().str());
  llvm::sort(out);
  return out;
}

llvm::Expected<Tensor> SafetensorsFile::read(StringRef name) const {
  const SafetensorsEntry *entry = find(name);
  if (!entry)
    return error(filePath, "no tensor '" + name + "'");
  Tensor t;
  t.shape = entry->shape;
  size_t count = Tensor::numElements(entry->shape);
  t.data.resize(count);
  const char *in = data.data() + entry->begin;
  StringRef dtype = entry->dtype;
  if (dtype == "F32" || dtype == "F16" || dtype == "BF16") {
    ElementType element = dtype == "F32"   ? ElementType::F32
                          : dtype == "F16" ? ElementType::F16
                                           : ElementType::BF16;
    // Copied first: the mapped data need not be aligned for the type.
    std::vector<uint32_t> aligned((entry->end - entry->begin + 3) / 4);
    std::memcpy(aligned.data(), in, entry->end - entry->begin);
    loadElements(aligned.data(), count, element, t.data.data());
  } else if (dtype == "F64") {
    for (size_t i = 0; i < count; ++i) {
      double v;
      std::memcpy(&v, in + 8 * i, sizeof v);
      t.data[i] = static_cast<float>(v);
    }
  } else {
    return error(filePath, "tensor '" + name + "' has dtype " + dtype +
                               "; tx reads F32, F16, BF16 and F64 weights");
  }
  return t;
}

std::string SafetensorsCheckpoint::findInDirectory(StringRef dir) {
  for (StringRef file : {"model.safetensors.index.json", "model.safetensors"}) {
    llvm::SmallString<256> path(dir);
    llvm::sys::path::append(path, file);
    if (llvm::sys::fs::is_regular_file(path))
      return std::string(path);
  }
  return "";
}

llvm::Expected<std::unique_ptr<SafetensorsCheckpoint>>
SafetensorsCheckpoint::open(StringRef path) {
  std::string file = path.str();
  if (llvm::sys::fs::is_directory(path)) {
    file = findInDirectory(path);
    if (file.empty())
      return error(path, "directory holds neither model.safetensors nor "
                         "model.safetensors.index.json");
  }
  auto ckpt =
      std::unique_ptr<SafetensorsCheckpoint>(new SafetensorsCheckpoint());
  ckpt->indexPath = file;
  if (!StringRef(file).ends_with(".json")) {
    auto one = SafetensorsFile::open(file);
    if (!one)
      return one.takeError();
    for (const std::string &name : (*one)->names())
      ckpt->where[name] = 0;
    ckpt->files.push_back(std::move(*one));
    return ckpt;
  }

  // A sharded checkpoint's index.
  auto buf = llvm::MemoryBuffer::getFile(file, /*IsText=*/true);
  if (!buf)
    return createStringError(buf.getError(), "cannot read '%s': %s",
                             file.c_str(), buf.getError().message().c_str());
  llvm::Expected<llvm::json::Value> index =
      llvm::json::parse((*buf)->getBuffer());
  if (!index)
    return error(file, "index is not JSON: " +
                           llvm::toString(index.takeError()));
  const llvm::json::Object *map =
      index->getAsObject() ? index->getAsObject()->getObject("weight_map")
                           : nullptr;
  if (!map)
    return error(file, "not a safetensors index: no \"weight_map\" object "
                       "({tensor name: shard file})");
  StringRef dir = llvm::sys::path::parent_path(file);
  llvm::StringMap<size_t> shardIndex;
  // In name order, so that errors do not depend on hashing.
  std::vector<std::pair<std::string, std::string>> entries;
  for (const auto &[tensor, shard] : *map) {
    std::optional<StringRef> s = shard.getAsString();
    if (!s)
      return error(file, "weight_map entry of tensor '" + StringRef(tensor) +
                             "' is not a file name");
    entries.emplace_back(StringRef(tensor).str(), s->str());
  }
  llvm::sort(entries);
  for (const auto &[tensor, shard] : entries) {
    auto [it, isNew] = shardIndex.try_emplace(shard, ckpt->files.size());
    if (isNew) {
      llvm::SmallString<256> shardPath(dir);
      llvm::sys::path::append(shardPath, shard);
      if (!llvm::sys::fs::exists(shardPath))
        return error(file, "shard '" + shard + "' (of tensor '" + tensor +
                               "') not found: expected " + shardPath);
      auto opened = SafetensorsFile::open(shardPath);
      if (!opened)
        return opened.takeError();
      ckpt->files.push_back(std::move(*opened));
    }
    if (!ckpt->files[it->second]->find(tensor))
      return error(file, "weight_map puts tensor '" + tensor + "' in '" +
                             shard + "', which does not hold it");
    ckpt->where[tensor] = it->second;
  }
  return ckpt;
}

llvm::Expected<const SafetensorsFile *>
SafetensorsCheckpoint::lookup(StringRef name,
                              const std::vector<int64_t> &shape) const {
  auto it = where.find(name);
  if (it == where.end()) {
    // The nearest name: one that differs by a prefix ("model."), else the
    // closest by edit distance when near enough to be a likely typo.
    std::string nearest;
    unsigned best = std::max<unsigned>(3, name.size() / 3) + 1;
    for (const auto &e : where) {
      StringRef other = e.first();
      unsigned d = other.ends_with("." + name.str()) ||
                           name.ends_with("." + other.str())
                       ? 0
                       : name.edit_distance(other, true, best);
      if (d < best || (d == best && !nearest.empty() && other < nearest)) {
        best = d;
        nearest = other.str();
      }
    }
    return error(indexPath,
                 "no checkpoint tensor '" + name + "', which the module "
                 "binds (the checkpoint holds " + Twine(where.size()) +
                     " tensors" +
                     (nearest.empty() ? Twine("")
                                      : Twine("; nearest: '") + nearest + "'") +
                     ")");
  }
  const SafetensorsFile &file = *files[it->second];
  const SafetensorsEntry &entry = *file.find(name);
  if (entry.shape != shape)
    return error(file.path(), "checkpoint tensor '" + name + "' has shape " +
                                  shapeString(entry.shape) + " (" +
                                  entry.dtype + "), the module expects " +
                                  shapeString(shape));
  return &file;
}

llvm::Expected<Tensor>
SafetensorsCheckpoint::read(StringRef name,
                            const std::vector<int64_t> &shape) const {
  llvm::Expected<const SafetensorsFile *> file = lookup(name, shape);
  if (!file)
    return file.takeError();
  return (*file)->read(name);
}

llvm::Error SafetensorsCheckpoint::readInto(StringRef name,
                                            const std::vector<int64_t> &shape,
                                            ElementType element,
                                            void *dest) const {
  llvm::Expected<const SafetensorsFile *> file = lookup(name, shape);
  if (!file)
    return file.takeError();
  const SafetensorsEntry &entry = *(*file)->find(name);
  StringRef stored = element == ElementType::F32   ? "F32"
                     : element == ElementType::F16 ? "F16"
                                                   : "BF16";
  if (entry.dtype == stored) {
    // The same encoding: the bytes as they are.
    std::memcpy(dest, (*file)->bytes(entry), entry.end - entry.begin);
    return llvm::Error::success();
  }
  llvm::Expected<Tensor> t = (*file)->read(name);
  if (!t)
    return t.takeError();
  storeElements(t->data.data(), t->data.size(), element, dest);
  return llvm::Error::success();
}

llvm::Error tx::writeSafetensors(
    StringRef path, const std::vector<std::pair<std::string, Tensor>> &tensors) {
  llvm::json::Object header;
  uint64_t offset = 0;
  for (const auto &[name, t] : tensors) {
    if (header.find(name) != header.end())
      return error(path, "tensor '" + name + "' written twice");
    llvm::json::Array shape;
    for (int64_t d : t.shape)
      shape.push_back(d);
    uint64_t size = t.data.size() * sizeof(float);
    header[name] = llvm::json::Object{
        {"dtype", "F32"},
        {"shape", std::move(shape)},
        {"data_offsets", llvm::json::Array{offset, offset + size}}};
    offset += size;
  }
  std::string text;
  llvm::raw_string_ostream(text) << llvm::json::Value(std::move(header));
  text.append((8 - text.size() % 8) % 8, ' ');
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec, llvm::sys::fs::OF_None);
  if (ec)
    return createStringError(ec, "cannot write '%s': %s", path.str().c_str(),
                             ec.message().c_str());
  char len[8];
  llvm::support::endian::write64le(len, text.size());
  os.write(len, 8);
  os << text;
  for (const auto &[name, t] : tensors)
    os.write(reinterpret_cast<const char *>(t.data.data()),
             t.data.size() * sizeof(float));
  return llvm::Error::success();
}
