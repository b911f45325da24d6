//===- Npy.cpp - .npy files ----------------------------------------------===//
//
// The subset of NumPy's format the runner needs: little-endian f32, C order.
// https://numpy.org/doc/stable/reference/generated/numpy.lib.format.html
//
//===----------------------------------------------------------------------===//

#include "TxDialect/Execution/Npy.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstring>

using namespace mlir;
using namespace mlir::tx;
using llvm::createStringError;
using llvm::SmallVector;
using llvm::StringRef;

/// The value of `key` in the header dict, up to the next top-level ',' or
/// '}' (a tuple counts as one value).
static std::optional<StringRef> headerValue(StringRef header, StringRef key) {
  std::string quoted = ("'" + key + "'").str();
  size_t pos = header.find(quoted);
  if (pos == StringRef::npos)
    return std::nullopt;
  StringRef rest = header.drop_front(pos + quoted.size()).ltrim();
  if (!rest.consume_front(":"))
    return std::nullopt;
  rest = rest.ltrim();
  size_t end = rest.starts_with("(") ? rest.find(')') + 1
                                     : rest.find_first_of(",}");
  return rest.take_front(end).trim();
}

namespace {
/// Where a .npy file's data is and what it holds.
struct NpyLayout {
  std::vector<int64_t> shape;
  size_t dataOffset = 0;
  size_t elements = 0;
};
} // namespace

/// The byte count of a .npy file's magic, version, length and header, from
/// its first bytes (at least 12, or the whole file when shorter); none when
/// those are not a .npy prefix (parseHeader says why).
static std::optional<size_t> headerEnd(StringRef bytes) {
  if (bytes.size() < 10 || !bytes.starts_with("\x93NUMPY"))
    return std::nullopt;
  unsigned major = static_cast<unsigned char>(bytes[6]);
  if (major == 1)
    return 10 + (static_cast<unsigned char>(bytes[8]) |
                 static_cast<unsigned char>(bytes[9]) << 8);
  if ((major == 2 || major == 3) && bytes.size() >= 12) {
    size_t len = 0;
    for (int i = 0; i < 4; ++i)
      len |= size_t(static_cast<unsigned char>(bytes[8 + i])) << (8 * i);
    return 12 + len;
  }
  return std::nullopt;
}

/// Parses the header at the start of `bytes` (which holds at least all of
/// it) of a file of `fileSize` bytes, and checks that the data that follows
/// is the shape's f32 elements.
static llvm::Expected<NpyLayout> parseHeader(StringRef path, StringRef bytes,
                                             size_t fileSize) {
  auto bad = [&](const llvm::Twine &why) {
    return createStringError(std::errc::invalid_argument, "'%s': %s",
                             path.str().c_str(), why.str().c_str());
  };
  if (bytes.size() < 10 || !bytes.starts_with("\x93NUMPY"))
    return bad("not a .npy file (no \\x93NUMPY magic)");
  unsigned major = static_cast<unsigned char>(bytes[6]);
  if (major != 1 && major != 2 && major != 3)
    return bad("unsupported .npy format version " + llvm::Twine(major));
  std::optional<size_t> end = headerEnd(bytes);
  if (!end || bytes.size() < *end)
    return bad("truncated header");
  size_t headerStart = major == 1 ? 10 : 12;
  StringRef header = bytes.slice(headerStart, *end);
  std::optional<StringRef> descr = headerValue(header, "descr");
  std::optional<StringRef> fortran = headerValue(header, "fortran_order");
  std::optional<StringRef> shapeStr = headerValue(header, "shape");
  if (!descr || !fortran || !shapeStr)
    return bad("malformed header: " + header.trim());
  StringRef d = descr->trim("'\"");
  if (d != "<f4" && d != "f4")
    return bad("element type '" + d +
               "' is not supported (only little-endian float32, '<f4')");
  if (*fortran != "False")
    return bad("Fortran-order arrays are not supported (save with C order)");
  NpyLayout layout;
  StringRef dims = shapeStr->trim("() ");
  SmallVector<StringRef> parts;
  dims.split(parts, ',', -1, /*KeepEmpty=*/false);
  for (StringRef p : parts) {
    int64_t v;
    if (p.trim().getAsInteger(10, v) || v < 0)
      return bad("malformed shape " + *shapeStr);
    layout.shape.push_back(v);
  }
  std::optional<int64_t> count = Tensor::checkedNumElements(layout.shape);
  if (!count)
    return bad("shape " + *shapeStr + " has more than " +
               llvm::Twine(Tensor::kMaxElements) + " elements");
  layout.elements = *count;
  layout.dataOffset = *end;
  size_t payload = fileSize - *end;
  if (payload != layout.elements * sizeof(float))
    return bad("holds " + llvm::Twine(payload) + " data bytes, shape " +
               *shapeStr + " needs " +
               llvm::Twine(layout.elements * sizeof(float)));
  return layout;
}

llvm::Expected<Tensor> tx::readNpy(StringRef path) {
  auto buf = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                         /*RequiresNullTerminator=*/false);
  if (!buf)
    return createStringError(buf.getError(), "cannot read '%s': %s",
                             path.str().c_str(),
                             buf.getError().message().c_str());
  StringRef bytes = (*buf)->getBuffer();
  llvm::Expected<NpyLayout> layout = parseHeader(path, bytes, bytes.size());
  if (!layout)
    return layout.takeError();
  Tensor t;
  t.shape = std::move(layout->shape);
  t.data.resize(layout->elements);
  std::memcpy(t.data.data(), bytes.data() + layout->dataOffset,
              layout->elements * sizeof(float));
  return t;
}

/// Reads `buffer.size()` bytes of `file` from `offset`: all of them, or an
/// error.
static llvm::Error readExactly(llvm::sys::fs::file_t file, StringRef path,
                               llvm::MutableArrayRef<char> buffer,
                               uint64_t offset) {
  while (!buffer.empty()) {
    llvm::Expected<size_t> n =
        llvm::sys::fs::readNativeFileSlice(file, buffer, offset);
    if (!n)
      return createStringError(std::errc::io_error, "cannot read '%s': %s",
                               path.str().c_str(),
                               llvm::toString(n.takeError()).c_str());
    if (*n == 0)
      return createStringError(std::errc::io_error,
                               "cannot read '%s': the file is shorter than "
                               "it was",
                               path.str().c_str());
    buffer = buffer.drop_front(*n);
    offset += *n;
  }
  return llvm::Error::success();
}

llvm::Expected<std::vector<int64_t>>
tx::readNpyInto(StringRef path,
                llvm::function_ref<float *(const std::vector<int64_t> &shape)>
                    destination) {
  llvm::Expected<llvm::sys::fs::file_t> file =
      llvm::sys::fs::openNativeFileForRead(path);
  if (!file)
    return createStringError(std::errc::no_such_file_or_directory,
                             "cannot read '%s': %s", path.str().c_str(),
                             llvm::toString(file.takeError()).c_str());
  auto close = llvm::make_scope_exit([&] { llvm::sys::fs::closeFile(*file); });
  llvm::sys::fs::file_status status;
  if (std::error_code ec = llvm::sys::fs::status(*file, status))
    return createStringError(ec, "cannot read '%s': %s", path.str().c_str(),
                             ec.message().c_str());
  size_t fileSize = status.getSize();
  // The header: its length is in the first 12 bytes.
  std::vector<char> head(std::min<size_t>(fileSize, 12));
  if (llvm::Error e = readExactly(*file, path, head, 0))
    return std::move(e);
  std::optional<size_t> end = headerEnd(StringRef(head.data(), head.size()));
  if (end && *end <= fileSize && *end > head.size()) {
    head.resize(*end);
    if (llvm::Error e = readExactly(
            *file, path, llvm::MutableArrayRef<char>(head).drop_front(12), 12))
      return std::move(e);
  }
  llvm::Expected<NpyLayout> layout =
      parseHeader(path, StringRef(head.data(), head.size()), fileSize);
  if (!layout)
    return layout.takeError();
  float *dest = destination(layout->shape);
  if (!dest)
    return layout->shape;
  // The data in one read, straight into the destination.
  if (llvm::Error e = readExactly(
          *file, path,
          llvm::MutableArrayRef<char>(reinterpret_cast<char *>(dest),
                                      layout->elements * sizeof(float)),
          layout->dataOffset))
    return std::move(e);
  return layout->shape;
}

llvm::Error tx::writeNpy(StringRef path, const Tensor &t) {
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < t.shape.size(); ++i)
    header += (i ? ", " : "") + std::to_string(t.shape[i]);
  if (t.shape.size() == 1)
    header += ","; // a 1-tuple
  header += "), }";
  // Magic (6) + version (2) + length (2) + header + '\n', padded to 64.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec, llvm::sys::fs::OF_None);
  if (ec)
    return createStringError(ec, "cannot write '%s': %s", path.str().c_str(),
                             ec.message().c_str());
  os << "\x93NUMPY" << char(1) << char(0) << char(header.size() & 0xff)
     << char(header.size() >> 8) << header;
  os.write(reinterpret_cast<const char *>(t.data.data()),
           t.data.size() * sizeof(float));
  return llvm::Error::success();
}
