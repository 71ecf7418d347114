#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace gpudiag::detail {

// Which rank (and host, where the line names one) printed a line. Launchers
// multiplex every rank into one log and tag each line with a prefix:
//   torchrun --tee     [rank3]: ...   [default3]: ...
//   srun --label       3: ...
//   NCCL               host:pid:tid [3] NCCL ...
struct RankTag {
  std::optional<int> rank;
  std::string host;
  std::size_t prefix_length = 0;  // bytes of the line the tag occupies
};

RankTag parse_rank_prefix(std::string_view line);

}  // namespace gpudiag::detail
