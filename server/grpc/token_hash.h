// Bearer-token primitives: SHA-256 digests (the tokens file stores these,
// never the token), a constant-time comparison, and new random tokens.
#ifndef WSCHED_SERVER_GRPC_TOKEN_HASH_H_
#define WSCHED_SERVER_GRPC_TOKEN_HASH_H_

#include <array>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace wsched::grpc_api {

using TokenDigest = std::array<uint8_t, 32>;

// Shorter clear-text tokens are refused: 22 random base64url characters
// carry 132 bits, above the 128 usually asked of a secret. Length cannot
// prove randomness; `wschedctl token create` makes 43-character tokens.
inline constexpr size_t kMinTokenLength = 22;
// Tokens are headers; anything longer is a mistake (or an attack on the parser).
inline constexpr size_t kMaxTokenLength = 512;

TokenDigest Sha256(absl::string_view text);
// Lower-case hex, 64 characters.
std::string ToHex(const TokenDigest& digest);
// 64 hex digits (either case); InvalidArgument otherwise.
absl::StatusOr<TokenDigest> ParseHexDigest(absl::string_view hex);

// Takes the same time whatever the contents, so a caller timing failed
// attempts learns nothing about how close a guess was.
bool DigestsEqual(const TokenDigest& a, const TokenDigest& b);

// A new token: 32 bytes from OpenSSL's RAND_bytes, base64url without
// padding (43 characters, 256 bits).
absl::StatusOr<std::string> NewRandomToken();

}  // namespace wsched::grpc_api

#endif  // WSCHED_SERVER_GRPC_TOKEN_HASH_H_
