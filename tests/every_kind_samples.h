// Sample kernels that together hold every statement kind of ir/stmt_kinds.h, each printed
// canonically (tests/ir/every_kind_test.cpp checks both facts).
#pragma once

namespace pb::test {

constexpr const char* kLowered = R"chi(dense S1 : [8]
field x : f32[8] grad x_grad dual x_dual in S1
field c : i32[]
arg 0 : i32
arg 1 : ndarray<f32, 1>
kernel "all" {
  <i32> $0 = argload[0]
  <*f32> $1 = argload[1]
  <i32> $2 = const 0
  <f32> $3 = const 0.95
  $4 : for in range($2, $0) block_dim=adaptive {
    <i32> $5 = loop $4 index 0
    <*f32> $6 = external_ptr $1, [$5] layout=AOS is_grad=true
    <f32> $7 = global load volatile $6
    <f32> $8 = sin $7
    <f32> $9 = mul $7 $8
    <*f32> $10 = alloca
    <f32> $11 : local store [$10 <- $9]
    <f32> $12 = local load [$10]
    <u1> $13 = cmp_lt $7 $3
    <f32> $14 = select($13, $7, $8)
    <i32> $15 = reinterpret_cast_bits<i32> $14
    $16 : if $13 {
      <*i32> $17 = global ptr [c], index [] activate=false
      <i32> $18 = atomic bit_xor($17, $15)
    } else {
      $19 : global store [$6 <- $14]
    }
    <f32> $20 = stack alloc (max_size=16)
    <f32> $21 : stack push $20, val = $9
    <f32> $22 = stack load top $20
    <f32> $23 = stack load top adj $20
    <f32> $24 : stack acc adj $20, val = $12
    <f32> $25 : stack pop $20
    $26 : reversed for in range($2, $0) block_dim=64  loop_name=inner{
      <*i32> $27 = alloca
      $28 : while true {
        $29 : while control $27, $13
        $30 continue
      }
    }
    print "x = ", $7, " \"quoted\"\n"
    32 : assert $13, "raw, text %d", $5
  }
  $33 : struct for in S1 noneblock_dim=adaptive {
    <i32> $34 = loop $33 index 0
    <*f32> $35 = global ptr [x_grad], index [$34] activate=true
  }
}
)chi";

constexpr const char* kOffloaded = R"chi(field x : f32[2, 3]
kernel {
  $0 = offloaded range_for(0, 8) grid_dim=0 block_dim=128
  tls prologue {
    <*i32> $1 = thread local ptr (offset = 0 B)
  }
  body {
    <i32> $2 = loop $0 index 0
    <i32> $3 = loop $0 index linear
    <*gen> $4 = get root nullptr
    <i32> $5 = linearized(ind {$2}, stride {8})
    <*gen> $6 = [S1dense][dense]::lookup($4, $5) activate = false
    <*f32> $7 = get child [S1dense->S2place<f32>] $6
    <*i32> $8 = global tmp var (offset = 0 B)
    <i32> $9 = bit_extract($3) bit_range=[0, 4)
    <i32> $10 = offset $9 + 100
    <i32> $11 = atomic add($8, $10)
  }
  tls_epilogue {
    <*i32> $12 = thread local ptr (offset = 0 B)
  }
  $13 = offloaded range_for(0, tmp(offset=0B)) grid_dim=0 block_dim=64 loop_name=a gdw_level=1
  body {
    <i32> $14 = const 0
    $15 : return $14
  }
  $16 = offloaded struct_for(x) grid_dim=0 block_dim=64 bls=none
  bls prologue {
  }
  body {
  }
  bls_epilogue {
  }
  $17 = offloaded listgen S0root->S1dense gdw_level=0
  $18 = offloaded garbage collect S1dense
  $19 = offloaded clear_list S1dense
  $20 = offloaded
  body {
    <*i32> $21 = alloca
    <i32> $22 = const 1
    $23 : while true {
      $24 : while control nullptr, $22
    }
  }
}
)chi";

// The kinds no backend compiles (ir::has_no_backend); the interpreter runs this kernel
// (tests/runtime/interp_more_test.cpp).
constexpr const char* kInterpreterOnly = R"chi(dense S1 : [8]
field x : f32[8] in S1
field n : i32[8] in S1
arg 0 : ndarray<i32, 2>
kernel "more" {
  <i32> $0 = external_tensor_shape_along_axis 0, arg_id [0]
  <i32> $1 = external_tensor_shape_along_axis 1, arg_id 0
  <i32> $2 = add $0 $1
  $3 : for in range($0, $2) block_dim=adaptive {
    <i32> $4 = loop $3 index 0
    <i32> $5 = loop_unique($4)
    <i32> $6 = loop_unique($5, covers=[S2, S3])
    <i32> $7 = assume_in_range($4-1 <= $6 < $4+1)
    decorate $5 : Loop-unique 1
    decorate $6 : ... size = 2
    <*i32> $8 = global ptr [n], index [$7] activate=true
    <u1> $9 = is_active [S1] ptr = $8
    <i32> $10 = activate [S1] ptr = $8
    <i32> $11 = deactivate [S1] ptr = $8
    <i32> $12 = cast_value<i32> $9
    $13 : global store [$8 <- $12]
    <*f32> $14 = global ptr [x], index [$7] activate=true
    <f32> $15 = rand()
    $16 : global store [$14 <- $15]
    <*gen> $17 = global ptr [S1], index [$7] activate=true
    <u1> $18 = is_active [S1] ptr = $17
  }
}
)chi";

// Kinds read and printed but not run (a run error names them; tests/runtime/interp_more_test.cpp).
constexpr const char* kReadOnly = R"chi(dense S1 : [8]
kernel "readonly" {
  $0 = offloaded struct_for(S1) grid_dim=0 block_dim=64 bls=none
  body {
    <i32> $1 = loop $0 index 0
    <i32> $2 = loop $0 block corner index 0
    <i32> $3 = sub $1 $2
    <*f32> $4 = block local ptr (offset = $3)
    <i32> $5 = internal call subgroupShuffle($1, $3)
    <i32> $6 = internal call workgroupBarrier()
    <*i32> $7 = alloca
    <*i32> $8 = ref($7)
    <i32> $9 = call "f", args = {$8, $5}
    $10 : atomic bit_struct_store $4, ch_ids=[0, 1], values=[$5, $9]
    $11 : bit_struct_store $4, ch_ids=[2], values=[$6]
  }
}
)chi";

// Tensor values and pointers (the interpreter runs all but the tensors of pointers; scalarize
// turns every one into scalars: tests/passes/scalarize_test.cpp).
constexpr const char* kTensor = R"chi(field v : [Tensor (2, 2) f32][4] grad v_grad
field a : f32[4]
field b : f32[4]
arg 0 : ndarray<[Tensor (3) f32], 1>
kernel "tensor" {
  <i32> $0 = const 0
  <i32> $1 = const 4
  <*[Tensor (3) f32]> $2 = argload[0]
  $3 : for in range($0, $1) block_dim=adaptive {
    <i32> $4 = loop $3 index 0
    <*[Tensor (2, 2) f32]> $5 = global ptr [v], index [$4] activate=true
    <[Tensor (2, 2) f32]> $6 = global load $5
    <f32> $7 = get_element($6, 1, 0)
    <f32> $8 = get_element($6, 3)
    <[Tensor (2) f32]> $9 = [$7, $8]
    <*[Tensor (2) f32]> $10 = alloca
    <[Tensor (2) f32]> $11 : local store [$10 <- $9]
    <*f32> $12 = shift ptr [$10 + $0]
    <f32> $13 = local load [$12]
    <*[Tensor (2) f32]> $14 = matrix of global ptr [a, b], index [$4] activate=true
    <[Tensor (2) f32]> $15 = global load $14
    <*f32> $16 = global ptr [a], index [$4] activate=true
    <*f32> $17 = global ptr [b], index [$4] activate=true
    <*[Tensor (2) f32]> $18 = matrix of matrix ptr [$16, $17]
    <[Tensor (2) f32]> $19 = add $15 $9
    <[Tensor (2) u1]> $20 = cmp_lt $19 $15
    <[Tensor (2) f32]> $21 = select($20, $19, $15)
    <[Tensor (2) f32]> $22 = neg $21
    <[Tensor (2) i32]> $23 = cast_value<[Tensor (2) i32]> $22
    <[Tensor (2) f32]> $24 = atomic add($18, $22)
    <*f32> $25 = shift ptr [$5 + $4]
    $26 : global store [$25 <- $13]
    <*[Tensor (3) f32]> $27 = external_ptr $2, [$4] layout=AOS is_grad=false
    <[Tensor (3) f32]> $28 = global load $27
    <f32> $29 = get_element($28, 2)
    <*f32> $30 = shift ptr [$27 + $0]
    $31 : global store [$30 <- $29]
  }
}
)chi";

// Mesh kernels (read, printed and verified; running one is a run error naming its mesh for or
// mesh_for task: tests/runtime/interp_more_test.cpp), lowered and offloaded.
constexpr const char* kMesh = R"chi(arg 0 : ndarray<f32, 1>
kernel "mesh" {
  <*f32> $0 = external_tensor_base_ptr (arg_id=[0], is_grad=false)
  $1 : mesh for (verts -> edges) none{
    <i32> $2 = loop $1 index 0
    <u16> $3 = $2 idx relation edges size
    <i32> $4 = const 0
    <i32> $5 = cast_value<i32> $3
    $6 : for in range($4, $5) block_dim=adaptive {
      <i32> $7 = loop $6 index 0
      <u16> $8 = $2 idx relation edges[$7]
      <i32> $9 = local to global edges $8
      <i32> $10 = global to reordered edges $9
    }
    <i32> $11 = local to reordered verts $2
    <i32> $12 = mesh patch idx
  }
}
)chi";

constexpr const char* kMeshOffloaded = R"chi(kernel "mesh_offloaded" {
  $0 = offloaded mesh_for(verts -> Unknown) num_patches=8 grid_dim=0 block_dim=128 bls=none
  body prologue {
    <i32> $1 = mesh patch idx
  }
  body {
    <i32> $2 = loop $0 index 0
    <i32> $3 = local to global verts $2
  }
}
)chi";

}  // namespace pb::test
