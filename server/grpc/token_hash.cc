#include "server/grpc/token_hash.h"

#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <openssl/sha.h>


#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

namespace wsched::grpc_api {

TokenDigest Sha256(absl::string_view text) {
  TokenDigest digest;
  SHA256(reinterpret_cast<const unsigned char*>(text.data()), text.size(), digest.data());
  return digest;
}

std::string ToHex(const TokenDigest& digest) {
  return absl::BytesToHexString(
      absl::string_view(reinterpret_cast<const char*>(digest.data()), digest.size()));
}

absl::StatusOr<TokenDigest> ParseHexDigest(absl::string_view hex) {
  if (hex.size() != 64) {
    return absl::InvalidArgumentError(
        absl::StrCat("must be 64 hex digits (a SHA-256), not ", hex.size(), " characters"));
  }
  for (char c : hex) {
    if (!absl::ascii_isxdigit(static_cast<unsigned char>(c))) {
      return absl::InvalidArgumentError("must be 64 hex digits (a SHA-256)");
    }
  }
  std::string bytes = absl::HexStringToBytes(hex);
  TokenDigest digest;
  std::copy(bytes.begin(), bytes.end(), digest.begin());
  return digest;
}

bool DigestsEqual(const TokenDigest& a, const TokenDigest& b) {
  return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

absl::StatusOr<std::string> NewRandomToken() {
  std::string bytes(32, '\0');
  // OpenSSL's CSPRNG (seeded from the kernel), as for every other secret.
  auto* out = reinterpret_cast<unsigned char*>(bytes.data());
  if (RAND_bytes(out, static_cast<int>(bytes.size())) != 1) {
    return absl::UnavailableError("cannot draw 32 random bytes (OpenSSL RAND_bytes failed)");
  }
  return absl::WebSafeBase64Escape(bytes);  // No padding: 43 characters.
}

}  // namespace wsched::grpc_api
