#include <gtest/gtest.h>

#include <string>

#include "test_util.hpp"

using namespace gpudiag;
using namespace gpudiag::testing;

namespace {

const Finding* finding(const Diagnosis& d, const std::string& kind) {
  for (const auto& f : d.findings)
    if (f.kind == kind) return &f;
  return nullptr;
}

}  // namespace

// Rank 2 runs out of memory; ranks 0, 1 and 3 then hit the watchdog and the
// launcher reaps everyone with SIGABRT. The root cause is rank 2's OOM.
TEST(RootCause, FirstFailingRankOverTheCascade) {
  const std::string log =
      "[rank0]: step 4200 loss 2.31\n"
      "[rank2]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 4.00 GiB. GPU 2 has a total "
      "capacity of 79.19 GiB of which 1.2 GiB is free.\n"
      "[rank0]:[E0620 02:24:27.131 4412 ProcessGroupNCCL.cpp:632] [Rank 0] Watchdog caught collective "
      "operation timeout: WorkNCCL(SeqNum=5008, OpType=ALLREDUCE, Timeout(ms)=600000) ran for 600035 "
      "milliseconds before timing out.\n"
      "[rank1]:[E0620 02:24:27.131 4412 ProcessGroupNCCL.cpp:632] [Rank 1] Watchdog caught collective "
      "operation timeout: WorkNCCL(SeqNum=5008, OpType=ALLREDUCE, Timeout(ms)=600000) ran for 600035 "
      "milliseconds before timing out.\n"
      "terminate called after throwing an instance of 'c10::DistBackendError'\n"
      "  exitcode  : -6 (pid: 183889)  (SIGABRT)\n";
  Diagnosis d = diagnose_text(log);
  EXPECT_EQ(d.cls, "cuda_oom");
  ASSERT_FALSE(d.evidence.empty());
  EXPECT_EQ(d.evidence.front().rank, 2);
  EXPECT_EQ(d.evidence.front().values.at("requested"), "4.00 GiB");
  const Finding* cascade = finding(d, "cascade");
  ASSERT_NE(cascade, nullptr);
  EXPECT_EQ(cascade->cls, "nccl_timeout");
  EXPECT_NE(cascade->message.find("rank 0"), std::string::npos) << cascade->message;
  EXPECT_NE(cascade->message.find("(rank 2)"), std::string::npos) << cascade->message;
  bool names_rank = false;
  for (const auto& s : d.verdict.shows) names_rank |= s == "the first failure is on rank 2";
  EXPECT_TRUE(names_rank);
}

TEST(RootCause, CascadeAloneIsReported) {
  // No rank says why: the timeout is all there is, and it is not dressed up as
  // the watchdog's abort or the RuntimeError that carries it.
  Diagnosis d = diagnose_text(
      "[rank1]: RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:553] Connection closed by "
      "peer [127.0.0.1]:3821. This is typically caused by a remote worker crashing.\n"
      "  exitcode  : -6 (pid: 9196)  (SIGABRT)\n");
  EXPECT_EQ(d.cls, "native_abort");
  Diagnosis peer = diagnose_text(
      "[rank1]: RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:553] Connection closed by "
      "peer [127.0.0.1]:3821. This is typically caused by a remote worker crashing.\n");
  EXPECT_EQ(peer.cls, "nccl");
  EXPECT_EQ(peer.evidence.front().rank, 1);
}

TEST(RootCause, RecoveredFailuresDoNotDecide) {
  std::string log = "auto batch size: CUDA out of memory. Tried to allocate 8.82 GiB.\n";
  for (int s = 10; s <= 200; s += 10)
    log += "step " + std::to_string(s) + " loss " + std::to_string(3.0 / s) + "\n";
  Diagnosis done = diagnose_text(log + "training complete\n", 0);
  EXPECT_EQ(done.cls, "healthy");
  ASSERT_NE(finding(done, "recovered"), nullptr);
  EXPECT_EQ(finding(done, "recovered")->cls, "cuda_oom");
  // Cut off mid-run: still not an OOM, since training went on after it.
  EXPECT_EQ(diagnose_text(log).cls, "unknown");
  // The same OOM as the last word of the log is the cause.
  EXPECT_EQ(diagnose_text("step 10 loss 2.0\n" + std::string("torch.OutOfMemoryError: CUDA out of memory. "
                                                              "Tried to allocate 8.82 GiB.\n")).cls,
            "cuda_oom");
}

TEST(RootCause, ApplicationXidIsNotHardware) {
  Diagnosis d = diagnose_text(
      "[669598.79] NVRM: Xid (PCI:0000:9a:00): 31, pid=121814, name=python, Ch 00000008, MMU Fault\n"
      "torch.AcceleratorError: CUDA error: an illegal memory access was encountered\n");
  EXPECT_EQ(d.cls, "cuda_runtime");
  ASSERT_NE(finding(d, "context"), nullptr);
  EXPECT_EQ(finding(d, "context")->evidence->values.at("xid"), "31");
  EXPECT_EQ(diagnose_text("NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.\n").cls,
            "gpu_hardware");
}
