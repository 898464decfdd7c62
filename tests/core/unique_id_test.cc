// The unique id (core/bootstrap.h): what hoopGetUniqueId hands out encodes the root's address,
// the secret and the job's tag, and decoding garbage is a clear error.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "base/error.h"
#include "core/bootstrap.h"

namespace hoop {
namespace {

TEST(UniqueId, EncodeDecodeRoundTrip) {
  BootstrapId id;
  id.root = SocketAddress::parse("127.0.0.1:4242");
  id.secret = Secret::random();
  id.jobTag = 0x1122334455667788ull;
  BootstrapId back = BootstrapId::decode(id.encode());
  EXPECT_EQ(back.root.toString(), "127.0.0.1:4242");
  EXPECT_TRUE(back.secret.matches(id.secret));
  EXPECT_EQ(back.jobTag, id.jobTag);
  EXPECT_TRUE(back.authenticated);

  id.root = SocketAddress::parse("[::1]:7");
  EXPECT_EQ(BootstrapId::decode(id.encode()).root.toString(), "[::1]:7");
}

TEST(UniqueId, GarbageIsAClearError) {
  hoopUniqueId garbage{};
  std::memset(garbage.internal, 0x41, sizeof(garbage.internal));
  try {
    BootstrapId::decode(garbage);
    FAIL() << "decoded garbage";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), hoopInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("not a hoop unique id"), std::string::npos);
  }
}

}  // namespace
}  // namespace hoop
