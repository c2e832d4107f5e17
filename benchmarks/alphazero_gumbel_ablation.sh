#!/bin/bash
# Gumbel AlphaZero against PUCT self-play, both at 16 simulations a move: two training runs of
# 10 minutes side by side, each pinned to one core with one thread, then each model (PUCT 200
# simulations) against UCT 2,000 and 200 (100 games each) and on the solved positions.
#
#     bash benchmarks/alphazero_gumbel_ablation.sh [OUT_DIR]     # from the repository root
#
# The runs' files go to OUT_DIR (default runs/abl); the reports that were committed are in
# benchmarks/results/alphazero_gumbel_ablation/. Needs 2 cores (taskset -c 0 and 1).
set -e
OUT=${1:-runs/abl}
PY=${PYTHON:-.venv/bin/python}
mkdir -p "$OUT"
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 NUMBA_NUM_THREADS=1
export XLA_FLAGS="--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
COMMON="--minutes 10 --net mlp --hidden 512 --games 256 --parallel 128 --sims 16 --steps 100
  --batch 512 --capacity 400000 --window 50000 --mirror --eval-every 100000"
taskset -c 0 $PY benchmarks/alphazero_curve.py $COMMON --model "$OUT/puct16.npz" \
  --out "$OUT/puct16_curve.json" > "$OUT/puct16.log" 2>&1 &
taskset -c 1 $PY benchmarks/alphazero_curve.py $COMMON --gumbel 16 --model "$OUT/gumbel16.npz" \
  --out "$OUT/gumbel16_curve.json" > "$OUT/gumbel16.log" 2>&1 &
wait
for arm in puct16 gumbel16; do
  $PY benchmarks/alphazero_arena.py --model "$OUT/$arm.npz" --games 100 --opponents 2000 200 \
    --out "$OUT/${arm}_arena.json"
  $PY benchmarks/connect4_value_moves.py --model "$OUT/$arm.npz" --agents puct200_model \
    --out "$OUT/${arm}_value.json"
done
