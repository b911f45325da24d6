//===- Npy.cpp - .npy files ----------------------------------------------===//
//
// The subset of NumPy's format the runner needs: little-endian f32, C order.
// https://numpy.org/doc/stable/reference/generated/numpy.lib.format.html
//
//===----------------------------------------------------------------------===//

#include "TxDialect/Execution/Npy.h"

#include "llvm/ADT/STLExtras.h"
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

llvm::Expected<Tensor> tx::readNpy(StringRef path) {
  auto buf = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                         /*RequiresNullTerminator=*/false);
  if (!buf)
    return createStringError(buf.getError(), "cannot read '%s': %s",
                             path.str().c_str(),
                             buf.getError().message().c_str());
  StringRef bytes = (*buf)->getBuffer();
  auto bad = [&](const llvm::Twine &why) {
    return createStringError(std::errc::invalid_argument, "'%s': %s",
                             path.str().c_str(), why.str().c_str());
  };
  if (bytes.size() < 10 || !bytes.starts_with("\x93NUMPY"))
    return bad("not a .npy file (no \\x93NUMPY magic)");
  unsigned major = static_cast<unsigned char>(bytes[6]);
  size_t headerLen, headerStart;
  if (major == 1) {
    headerLen = static_cast<unsigned char>(bytes[8]) |
                static_cast<unsigned char>(bytes[9]) << 8;
    headerStart = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12)
      return bad("truncated header");
    headerLen = 0;
    for (int i = 0; i < 4; ++i)
      headerLen |= size_t(static_cast<unsigned char>(bytes[8 + i])) << (8 * i);
    headerStart = 12;
  } else {
    return bad("unsupported .npy format version " + llvm::Twine(major));
  }
  if (bytes.size() < headerStart + headerLen)
    return bad("truncated header");
  StringRef header = bytes.substr(headerStart, headerLen);
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
  Tensor t;
  StringRef dims = shapeStr->trim("() ");
  SmallVector<StringRef> parts;
  dims.split(parts, ',', -1, /*KeepEmpty=*/false);
  for (StringRef p : parts) {
    int64_t v;
    if (p.trim().getAsInteger(10, v) || v < 0)
      return bad("malformed shape " + *shapeStr);
    t.shape.push_back(v);
  }
  std::optional<int64_t> count = Tensor::checkedNumElements(t.shape);
  if (!count)
    return bad("shape " + *shapeStr + " has more than " +
               llvm::Twine(Tensor::kMaxElements) + " elements");
  size_t n = *count;
  StringRef payload = bytes.drop_front(headerStart + headerLen);
  if (payload.size() != n * sizeof(float))
    return bad("holds " + llvm::Twine(payload.size()) + " data bytes, shape " +
               *shapeStr + " needs " + llvm::Twine(n * sizeof(float)));
  t.data.resize(n);
  std::memcpy(t.data.data(), payload.data(), payload.size());
  return t;
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
