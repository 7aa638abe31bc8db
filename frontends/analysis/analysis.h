// The analysis engine: JSON lines in, JSON lines out, for tools that want
// many positions evaluated at once (in the manner of KataGo's analysis
// engine). Each query names a game (rules, start position, moves), the turns
// to analyse and a budget; the turns of all queries are searched several at
// a time, the MCTS ones sharing one evaluator per network, and answered as
// they finish, so answers may come out of order. The formats are in
// docs/analysis.md.
//
// AnalysisService is the engine as a shared service: many clients (the
// lines of `ultima analyze`, the connections of `ultima serve`) hand it
// queries, each with the sink its answers go to. run_analysis drives one
// service from a stream.
#pragma once

#include <functional>
#include <iosfwd>
#include <memory>
#include <string>

#include "engine/play/player_spec.h"
#include "engine/search/search.h"

namespace ultima {

struct AnalysisOptions {
  int parallel = 4;           // turns searched at once
  int hash_mb = kDefaultHashMb;  // transposition table of each alpha-beta search
  std::string version = "?";  // what query_version answers
  // The most turns (and jobs) running and queued together; a query that
  // would go beyond it is refused with a busy error. 0: no limit.
  int max_pending = 0;
  // The most threads one MCTS search may use (its mcts "threads="); more is
  // an error naming the field. 0: no limit.
  int max_threads = 0;
  // The evaluation of alpha-beta queries that name none: "default" (the
  // shipped learned evaluation), "none" (the hand-written one) or a network
  // file (load_nnue in engine/play/level.h). Read when the service starts;
  // one that cannot be read is an error then.
  std::string nnue = "default";
};

// Where a query's answers go: one JSON object's text (no newline), and
// whether it is the query's last answer (its last turn's final answer, or
// an error that ends it). Called from the service's threads, one call at a
// time for the whole service, so a sink should be quick.
using AnalysisSink = std::function<void(const std::string& answer, bool last)>;

class AnalysisService {
 public:
  enum class Admission {
    kQueued,    // its turns are queued; answers follow on the sink
    kAnswered,  // answered at once (an action, or an error) on the sink
    kBusy,      // refused: over max_pending (a busy error went to the sink)
  };

  // Networks (queries with "weights") come from `networks`, each file
  // loaded once and shared by every query that names it.
  explicit AnalysisService(NetworkFactory networks = {}, AnalysisOptions options = {});
  // Finishes (below).
  ~AnalysisService();
  AnalysisService(const AnalysisService&) = delete;
  AnalysisService& operator=(const AnalysisService&) = delete;

  // One query or action line of `client`. Query ids are the client's own:
  // two clients may both use "a", and a terminate action reaches only the
  // queries of the client that sends it. A blank line is ignored
  // (kAnswered, nothing sent).
  Admission submit(const std::string& line, AnalysisSink sink, const std::string& client = "");

  // Runs `job` on a search worker, queued with the turns and counted
  // against the same limit: kQueued, or kBusy (not run). An exception it
  // throws is swallowed; jobs report through what they capture.
  Admission submit_job(std::function<void()> job);

  // Terminates query `id` of `client` as a terminate action would: queued
  // turns are answered at once, running ones stop and answer with what they
  // found. The number of turns terminated (0: no such query left).
  int terminate(const std::string& client, const std::string& id);

  // Turns and jobs queued or running now.
  int pending() const;

  // Answers every query still queued or running, then stops the threads;
  // later submissions are refused as busy.
  void finish();

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

// Reads queries, one JSON object per line, until the end of `in`, answering
// on `out`, one JSON object per line. At the end of the input every query
// still queued or running is finished and answered before it returns. A bad
// query gets an error answer and the engine reads on. Networks (queries with
// "weights") come from `networks`, each file loaded once and shared.
void run_analysis(std::istream& in, std::ostream& out, const NetworkFactory& networks = {},
                  const AnalysisOptions& options = {});

}  // namespace ultima
