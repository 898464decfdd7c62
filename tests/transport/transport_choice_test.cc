#include <gtest/gtest.h>

#include "base/error.h"
#include "scoped_env.h"
#include "transport/transport_registry.h"

namespace hoop {
namespace {

constexpr bool kSameHost = true;
constexpr bool kOtherHost = false;

PeerPair pairWith(bool sameHost, const char* peerName = "rank 3 (host b)") {
  return {0, 3, sameHost, peerName};
}

std::string choose(const char* setting, bool sameHost) {
  return std::string(chooseTransport(TransportPolicy::parse(setting), pairWith(sameHost)).name());
}

// The message of the hoop::Error that `setting` gives for a peer, or "" when it succeeds.
std::string errorFor(const char* setting, bool sameHost) {
  try {
    choose(setting, sameHost);
    return "";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), hoopInvalidArgument);
    return error.what();
  }
}

TEST(ChooseTransport, DefaultIsShmWithinAHostTcpAcross) {
  EXPECT_EQ(choose("", kSameHost), "shm");
  EXPECT_EQ(choose("", kOtherHost), "tcp");
  EXPECT_EQ(choose("shm,tcp", kSameHost), "shm");
  EXPECT_EQ(choose("tcp,shm", kOtherHost), "tcp");
}

TEST(ChooseTransport, ForcedTcpEverywhere) {
  EXPECT_EQ(choose("tcp", kSameHost), "tcp");
  EXPECT_EQ(choose("tcp", kOtherHost), "tcp");
}

TEST(ChooseTransport, ExcludedShmMeansTcp) {
  EXPECT_EQ(choose("^shm", kSameHost), "tcp");
  EXPECT_EQ(choose("^shm", kOtherHost), "tcp");
  EXPECT_EQ(choose("^rdma", kSameHost), "shm");
  EXPECT_EQ(choose("^tcp", kSameHost), "shm");
}

TEST(ChooseTransport, ForcedShmAcrossHostsIsAClearError) {
  EXPECT_EQ(choose("shm", kSameHost), "shm");
  std::string message = errorFor("shm", kOtherHost);
  EXPECT_NE(message.find("HOOP_TRANSPORT='shm'"), std::string::npos) << message;
  EXPECT_NE(message.find("rank 3 (host b) on another host"), std::string::npos) << message;
  EXPECT_NE(message.find("shm works only between ranks on the same host"), std::string::npos)
      << message;
  EXPECT_NE(errorFor("^tcp", kOtherHost), "");
}

TEST(ChooseTransport, RdmaWithoutADeviceIsAClearError) {
  // pairWith's ranks have no RDMA summary (as where nothing was probed): rdma_choice_test.cc
  // covers the pairs that have one.
  std::string message = errorFor("rdma", kOtherHost);
  EXPECT_NE(message.find("this rank has no RDMA summary"), std::string::npos) << message;
  EXPECT_NE(errorFor("rdma", kSameHost), "");
  EXPECT_NE(errorFor("^shm,tcp", kSameHost), "");
}

TEST(TransportPolicy, UnknownNamesAreRejected) {
  for (const char* setting : {"foo", "tcp,ib", "^", "tcp,", "TCP"}) {
    try {
      TransportPolicy::parse(setting);
      ADD_FAILURE() << "'" << setting << "' accepted";
    } catch (const Error& error) {
      EXPECT_EQ(error.code(), hoopInvalidArgument);
      EXPECT_NE(std::string(error.what()).find("HOOP_TRANSPORT='"), std::string::npos);
    }
  }
  try {
    TransportPolicy::parse("tcp,foo");
    ADD_FAILURE() << "tcp,foo accepted";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("unknown transport 'foo'"), std::string::npos);
  }
}

TEST(TransportPolicy, ReadsHoopTransport) {
  {
    test::ScopedEnv env("HOOP_TRANSPORT", "tcp");
    TransportPolicy policy = TransportPolicy::fromEnv();
    EXPECT_EQ(policy.text(), "tcp");
    EXPECT_TRUE(policy.allows("tcp"));
    EXPECT_FALSE(policy.allows("shm"));
    EXPECT_EQ(chooseTransport(policy, pairWith(kSameHost, "rank 1")).name(), "tcp");
  }
  {
    test::ScopedEnv env("HOOP_TRANSPORT", std::nullopt);
    TransportPolicy policy = TransportPolicy::fromEnv();
    EXPECT_EQ(policy.text(), "");
    EXPECT_EQ(chooseTransport(policy, pairWith(kSameHost, "rank 1")).name(), "shm");
  }
  test::ScopedEnv env("HOOP_TRANSPORT", "bogus");
  EXPECT_THROW(TransportPolicy::fromEnv(), Error);
}

}  // namespace
}  // namespace hoop
