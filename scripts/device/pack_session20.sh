#!/usr/bin/env bash
# Packs devpkg/ for session 20: session19_run1.sh's configs (checks, A/B) plus (16,64) forms of the
# candidates, for session20_table.sh (issue 4's three shapes beside FLA). Carry devpkg and .whl.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
F="stages=2,fuse_inverse=1,loads_regs=24,aux_regs=120,state_regs=184"
bash "$root/scripts/device/pack_gdn.sh" \
  h16hv32 "H=16,HV=32,K=128,V=128,BV=64" \
  h16hv32p0 "H=16,HV=32,K=128,V=128,BV=64,precise=0" \
  h16hv32iw "H=16,HV=32,K=128,V=128,BV=64,inverse_in_warps=1" \
  h2hv4iw "H=2,HV=4,K=128,V=128,BV=64,inverse_in_warps=1" \
  h16hv32po "H=16,HV=32,K=128,V=128,BV=64,inverse_in_warps=1,inverse_products_once=1" \
  h2hv4po "H=2,HV=4,K=128,V=128,BV=64,inverse_in_warps=1,inverse_products_once=1" \
  h16hv32f0 "H=16,HV=32,K=128,V=128,BV=128,precise=0,$F" \
  h16hv32f0w "H=16,HV=32,K=128,V=128,BV=128,precise=0,inverse_in_warps=1,$F" \
  h16hv32f0wn "H=16,HV=32,K=128,V=128,BV=128,precise=0,inverse_in_warps=1,gate_ring=0,$F" \
  h16hv32f1 "H=16,HV=32,K=128,V=128,BV=128,precise=1,$F" \
  h2hv4f0 "H=2,HV=4,K=128,V=128,BV=128,precise=0,$F" \
  k256 "H=16,HV=32,K=256,V=256,BV=64,share_state_operand=0,stash_state=0" \
  k256s "H=16,HV=32,K=256,V=256,BV=64,share_state_operand=1,stash_state=0" \
  k256ss "H=16,HV=32,K=256,V=256,BV=64" \
  h16hv64 "H=16,HV=64,K=128,V=128,BV=64" \
  h16hv64iw "H=16,HV=64,K=128,V=128,BV=64,inverse_in_warps=1" \
  h16hv64po "H=16,HV=64,K=128,V=128,BV=64,inverse_in_warps=1,inverse_products_once=1" \
  h16hv64f0w "H=16,HV=64,K=128,V=128,BV=128,precise=0,inverse_in_warps=1,$F"
