#include "server/placement/node_ownership.h"

namespace wsched::placement {
namespace {

// FNV-1a over the bytes, then splitmix64's finalizer to spread the bits.
uint64_t Fnv1a(uint64_t hash, absl::string_view bytes) {
  for (unsigned char c : bytes) {
    hash ^= c;
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

uint64_t Mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace

uint64_t RendezvousWeight(absl::string_view node, absl::string_view replica) {
  uint64_t hash = Fnv1a(0xcbf29ce484222325ULL, node);
  hash = Fnv1a(hash ^ 0xff, replica);  // A separator: ("ab","c") != ("a","bc").
  return Mix(hash);
}

bool OwnsNode(absl::string_view node, absl::string_view me, const std::vector<std::string>& peers) {
  const uint64_t mine = RendezvousWeight(node, me);
  for (const std::string& peer : peers) {
    const uint64_t theirs = RendezvousWeight(node, peer);
    // Ties (practically never) go to the smaller replica id, the same everywhere.
    if (theirs > mine || (theirs == mine && absl::string_view(peer) < me)) return false;
  }
  return true;
}

}  // namespace wsched::placement
