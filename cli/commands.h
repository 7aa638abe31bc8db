// The subcommands of the `ultima` program, each in its own file.
#pragma once

#include <CLI/CLI.hpp>

namespace ultima::cli {

// Each registers its subcommand and the function that runs it.
void add_perft_command(CLI::App& app);
void add_moves_command(CLI::App& app);
void add_bench_command(CLI::App& app);
// `bench nn`, a subcommand of `bench` (cmd_bench_nn.cpp).
void add_bench_nn_command(CLI::App& bench);
void add_selfcheck_command(CLI::App& app);
void add_match_command(CLI::App& app);
void add_play_command(CLI::App& app);
void add_uci_command(CLI::App& app);
void add_analyze_command(CLI::App& app);
void add_serve_command(CLI::App& app);
void add_eval_command(CLI::App& app);
void add_tune_command(CLI::App& app);
void add_ladder_command(CLI::App& app);
void add_bots_command(CLI::App& app);
void add_loop_command(CLI::App& app);
void add_selfplay_command(CLI::App& app);
void add_train_command(CLI::App& app);
void add_init_command(CLI::App& app);
void add_status_command(CLI::App& app);
void add_puzzles_command(CLI::App& app);
// Its extract subcommand (cmd_puzzles_extract.cpp).
void add_puzzles_extract_command(CLI::App* puzzles);
void add_gate_command(CLI::App& app);
void add_nnue_command(CLI::App& app);
// `bench selfplay` and `bench train` (cmd_bench_pipeline.cpp).
void add_bench_selfplay_command(CLI::App& bench);
void add_bench_train_command(CLI::App& bench);
// `bench analyze` (cmd_bench_analyze.cpp).
void add_bench_analyze_command(CLI::App& bench);
// `bench solver` (cmd_bench_solver.cpp).
void add_bench_solver_command(CLI::App& bench);

}  // namespace ultima::cli
