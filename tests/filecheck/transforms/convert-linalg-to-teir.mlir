// Every pattern of convert-linalg-to-teir, then every refusal. Refusals leave the
// op untouched with a teir.not_converted reason; the second RUN prints the
// generic form, which shows the attribute on every op (linalg.transpose's
// custom form does not print attributes).

// RUN: teir-opt %s --split-input-file -p convert-linalg-to-teir | filecheck %s
// RUN: teir-opt %s --split-input-file -p convert-linalg-to-teir --print-op-generic | filecheck %s --check-prefix=REMARK

// A generic multiply-accumulate on strided layouts: byte strides and offsets
// from the layouts, the output's dimensions outermost.
func.func @generic_contraction(%A: memref<4x8xf32, strided<[16, 1], offset: 2>>, %B: memref<8x3xf32>, %C: memref<3x4xf32, strided<[1, 3]>>) {
  linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (k, j)>, affine_map<(i, j, k) -> (j, i)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%A, %B : memref<4x8xf32, strided<[16, 1], offset: 2>>, memref<8x3xf32>) outs(%C : memref<3x4xf32, strided<[1, 3]>>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %b, %a : f32
    %s = arith.addf %p, %c : f32
    linalg.yield %s : f32
  }
  func.return
}

// CHECK-LABEL: func.func @generic_contraction
// CHECK-NEXT:    %[[A:.*]] = memref.reinterpret_cast %A to offset: [0], sizes: [58], strides: [1] : memref<4x8xf32, strided<[16, 1], offset: 2>> to memref<58xf32>
// CHECK-NEXT:    %[[B:.*]] = memref.reinterpret_cast %B to offset: [0], sizes: [24], strides: [1] : memref<8x3xf32> to memref<24xf32>
// CHECK-NEXT:    %[[C:.*]] = memref.reinterpret_cast %C to offset: [0], sizes: [12], strides: [1] : memref<3x4xf32, strided<[1, 3]>> to memref<12xf32>
// CHECK-NEXT:    teir.config(%[[A]], %[[B]], %[[C]]) : (memref<58xf32>, memref<24xf32>, memref<12xf32>) {
// CHECK-NEXT:      teir.axis d1 extent 3 strides [0, 4, 4] offsets [8, 0, 0]
// CHECK-NEXT:      teir.axis d0 extent 4 strides [64, 0, 12] offsets [0, 0, 0]
// CHECK-NEXT:      teir.axis d2 extent 8 strides [4, 12, 0] offsets [0, 0, 0]
// CHECK-NEXT:      teir.primitive contraction_scalar Contraction {M = [], N = [], K = []} {data_type = "FP32"}
// CHECK-NEXT:      teir.schedule {
// CHECK-NEXT:        teir.iter d1 over d1 {
// CHECK-NEXT:          teir.iter d0 over d0 {
// CHECK-NEXT:            teir.iter d2 over d2 {
// CHECK-NEXT:              teir.invoke contraction -> contraction_scalar
// CHECK-NOT:   linalg.

// -----

// A batched contraction with the batch index anywhere, f64.
func.func @batched(%A: memref<2x3x5xf64>, %B: memref<5x2x4xf64>, %C: memref<3x2x4xf64>) {
  linalg.generic {indexing_maps = [affine_map<(b, i, j, k) -> (b, i, k)>, affine_map<(b, i, j, k) -> (k, b, j)>, affine_map<(b, i, j, k) -> (i, b, j)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%A, %B : memref<2x3x5xf64>, memref<5x2x4xf64>) outs(%C : memref<3x2x4xf64>) {
  ^bb0(%a: f64, %b: f64, %c: f64):
    %p = arith.mulf %a, %b : f64
    %s = arith.addf %c, %p : f64
    linalg.yield %s : f64
  }
  func.return
}

// CHECK-LABEL: func.func @batched
// CHECK:         teir.axis d1 extent 3 strides [40, 0, 64] offsets [0, 0, 0]
// CHECK-NEXT:    teir.axis d0 extent 2 strides [120, 32, 32] offsets [0, 0, 0]
// CHECK-NEXT:    teir.axis d2 extent 4 strides [0, 8, 8] offsets [0, 0, 0]
// CHECK-NEXT:    teir.axis d3 extent 5 strides [8, 64, 0] offsets [0, 0, 0]
// CHECK-NEXT:    teir.primitive contraction_scalar Contraction {M = [], N = [], K = []} {data_type = "FP64"}
// CHECK-NOT:   linalg.

// -----

// linalg.matmul, and its transposed form through indexing_maps.
func.func @matmul(%A: memref<4x8xf32>, %B: memref<8x16xf32>, %C: memref<4x16xf32>, %At: memref<8x4xf32>) {
  linalg.matmul ins(%A, %B : memref<4x8xf32>, memref<8x16xf32>) outs(%C : memref<4x16xf32>)
  linalg.matmul {indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>]} ins(%At, %B : memref<8x4xf32>, memref<8x16xf32>) outs(%C : memref<4x16xf32>)
  func.return
}

// CHECK-LABEL: func.func @matmul
// CHECK:         teir.axis d0 extent 4 strides [32, 0, 64] offsets [0, 0, 0]
// CHECK-NEXT:    teir.axis d1 extent 16 strides [0, 4, 4] offsets [0, 0, 0]
// CHECK-NEXT:    teir.axis d2 extent 8 strides [4, 64, 0] offsets [0, 0, 0]
// CHECK-NEXT:    teir.primitive contraction_scalar Contraction
// CHECK:         memref.reinterpret_cast %At
// CHECK:         teir.axis d0 extent 4 strides [4, 0, 64] offsets [0, 0, 0]
// CHECK-NEXT:    teir.axis d1 extent 16 strides [0, 4, 4] offsets [0, 0, 0]
// CHECK-NEXT:    teir.axis d2 extent 8 strides [16, 64, 0] offsets [0, 0, 0]
// CHECK-NEXT:    teir.primitive contraction_scalar Contraction
// CHECK-NOT:   linalg.

// -----

// The named contractions xDSL 0.74 lacks (teir_dialect.linalg_ops), each one
// Contraction with its fixed maps: batch axis d0 outermost, out's axes, then K.
func.func @named(%A: memref<4x8xf32>, %At: memref<8x4xf32>, %B: memref<8x16xf32>, %Bt: memref<16x8xf32>, %C: memref<4x16xf32>, %x: memref<8xf32>, %y: memref<4xf32>, %z: memref<16xf32>, %s: memref<f32>, %bA: memref<2x4x8xf32>, %bB: memref<2x8x16xf32>, %bBt: memref<2x16x8xf32>, %bC: memref<2x4x16xf32>) {
  linalg.batch_matmul ins(%bA, %bB : memref<2x4x8xf32>, memref<2x8x16xf32>) outs(%bC : memref<2x4x16xf32>)
  linalg.batch_matmul_transpose_b ins(%bA, %bBt : memref<2x4x8xf32>, memref<2x16x8xf32>) outs(%bC : memref<2x4x16xf32>)
  linalg.matmul_transpose_a ins(%At, %B : memref<8x4xf32>, memref<8x16xf32>) outs(%C : memref<4x16xf32>)
  linalg.matmul_transpose_b ins(%A, %Bt : memref<4x8xf32>, memref<16x8xf32>) outs(%C : memref<4x16xf32>)
  linalg.matvec ins(%A, %x : memref<4x8xf32>, memref<8xf32>) outs(%y : memref<4xf32>)
  linalg.vecmat ins(%x, %B : memref<8xf32>, memref<8x16xf32>) outs(%z : memref<16xf32>)
  linalg.dot ins(%x, %x : memref<8xf32>, memref<8xf32>) outs(%s : memref<f32>)
  func.return
}

// CHECK-LABEL: func.func @named
// CHECK:         teir.config(
// CHECK-NEXT:    teir.axis d0 extent 2 strides [128, 512, 256] offsets [0, 0, 0]
// CHECK-NEXT:    teir.axis d1 extent 4 strides [32, 0, 64] offsets [0, 0, 0]
// CHECK-NEXT:    teir.axis d2 extent 16 strides [0, 4, 4] offsets [0, 0, 0]
// CHECK-NEXT:    teir.axis d3 extent 8 strides [4, 64, 0] offsets [0, 0, 0]
// CHECK-NEXT:    teir.primitive contraction_scalar Contraction
// CHECK:         teir.config(
// CHECK-NEXT:    teir.axis d0 extent 2 strides [128, 512, 256] offsets [0, 0, 0]
// CHECK-NEXT:    teir.axis d1 extent 4 strides [32, 0, 64] offsets [0, 0, 0]
// CHECK-NEXT:    teir.axis d2 extent 16 strides [0, 32, 4] offsets [0, 0, 0]
// CHECK-NEXT:    teir.axis d3 extent 8 strides [4, 4, 0] offsets [0, 0, 0]
// CHECK-NEXT:    teir.primitive contraction_scalar Contraction
// CHECK:         teir.config(
// CHECK-NEXT:    teir.axis d0 extent 4 strides [4, 0, 64] offsets [0, 0, 0]
// CHECK-NEXT:    teir.axis d1 extent 16 strides [0, 4, 4] offsets [0, 0, 0]
// CHECK-NEXT:    teir.axis d2 extent 8 strides [16, 64, 0] offsets [0, 0, 0]
// CHECK-NEXT:    teir.primitive contraction_scalar Contraction
// CHECK:         teir.config(
// CHECK-NEXT:    teir.axis d0 extent 4 strides [32, 0, 64] offsets [0, 0, 0]
// CHECK-NEXT:    teir.axis d1 extent 16 strides [0, 32, 4] offsets [0, 0, 0]
// CHECK-NEXT:    teir.axis d2 extent 8 strides [4, 4, 0] offsets [0, 0, 0]
// CHECK-NEXT:    teir.primitive contraction_scalar Contraction
// CHECK:         teir.config(
// CHECK-NEXT:    teir.axis d0 extent 4 strides [32, 0, 4] offsets [0, 0, 0]
// CHECK-NEXT:    teir.axis d1 extent 8 strides [4, 4, 0] offsets [0, 0, 0]
// CHECK-NEXT:    teir.primitive contraction_scalar Contraction
// CHECK:         teir.config(
// CHECK-NEXT:    teir.axis d0 extent 16 strides [0, 4, 4] offsets [0, 0, 0]
// CHECK-NEXT:    teir.axis d1 extent 8 strides [4, 64, 0] offsets [0, 0, 0]
// CHECK-NEXT:    teir.primitive contraction_scalar Contraction
// CHECK:         teir.config(
// CHECK-NEXT:    teir.axis d0 extent 8 strides [4, 4, 0] offsets [0, 0, 0]
// CHECK-NEXT:    teir.primitive contraction_scalar Contraction
// CHECK-NOT:   linalg.

// -----

// A zero fill, a matmul and an in-place ReLU of one memref: one configuration.
func.func @fill_matmul_relu(%A: memref<4x8xf32>, %B: memref<8x16xf32>, %C: memref<4x16xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%C : memref<4x16xf32>)
  linalg.matmul ins(%A, %B : memref<4x8xf32>, memref<8x16xf32>) outs(%C : memref<4x16xf32>)
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%C : memref<4x16xf32>) outs(%C : memref<4x16xf32>) {
  ^bb0(%x: f32, %y: f32):
    %r = arith.maximumf %zero, %x : f32
    linalg.yield %r : f32
  }
  func.return
}

// CHECK-LABEL: func.func @fill_matmul_relu
// CHECK-NOT:     arith.constant
// CHECK-NEXT:    memref.reinterpret_cast %A
// CHECK-NEXT:    memref.reinterpret_cast %B
// CHECK-NEXT:    memref.reinterpret_cast %C
// CHECK-NEXT:    teir.config
// CHECK-NEXT:      teir.axis d0 extent 4 strides [32, 0, 64] offsets [0, 0, 0]
// CHECK-NEXT:      teir.axis d1 extent 16 strides [0, 4, 4] offsets [0, 0, 0]
// CHECK-NEXT:      teir.axis d2 extent 8 strides [4, 64, 0] offsets [0, 0, 0]
// CHECK-NEXT:      teir.primitive zero_scalar Zero {M = [], N = []} {data_type = "FP32"}
// CHECK-NEXT:      teir.primitive contraction_scalar Contraction {M = [], N = [], K = []} {data_type = "FP32"}
// CHECK-NEXT:      teir.primitive relu_scalar ReLU {M = [], N = []} {data_type = "FP32"}
// CHECK-NEXT:      teir.schedule {
// CHECK-NEXT:        teir.iter d0 over d0 {
// CHECK-NEXT:          teir.iter d1 over d1 {
// CHECK-NEXT:            teir.invoke zero -> zero_scalar
// CHECK-NEXT:            teir.iter d2 over d2 {
// CHECK-NEXT:              teir.invoke contraction -> contraction_scalar
// CHECK-NEXT:            }
// CHECK-NEXT:            teir.invoke relu -> relu_scalar
// CHECK-NEXT:          }
// CHECK-NEXT:        }
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return

// -----

// linalg.max against a zero-filled buffer is the ReLU; it joins the matmul.
func.func @matmul_max(%A: memref<4x8xf32>, %B: memref<8x16xf32>, %C: memref<4x16xf32>, %Z: memref<4x16xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%Z : memref<4x16xf32>)
  linalg.fill ins(%zero : f32) outs(%C : memref<4x16xf32>)
  linalg.matmul ins(%A, %B : memref<4x8xf32>, memref<8x16xf32>) outs(%C : memref<4x16xf32>)
  linalg.max ins(%C, %Z : memref<4x16xf32>, memref<4x16xf32>) outs(%C : memref<4x16xf32>)
  func.return
}

// CHECK-LABEL: func.func @matmul_max
// CHECK:         %[[Z:.*]] = memref.reinterpret_cast %Z
// CHECK-NEXT:    teir.config(%[[Z]], %[[Z]]) : (memref<64xf32>, memref<64xf32>) {
// CHECK-NEXT:      teir.axis d0 extent 4 strides [0, 64] offsets [0, 0]
// CHECK-NEXT:      teir.axis d1 extent 16 strides [0, 4] offsets [0, 0]
// CHECK-NEXT:      teir.primitive zero_scalar Zero
// CHECK:         teir.config
// CHECK:           teir.primitive zero_scalar Zero
// CHECK-NEXT:      teir.primitive contraction_scalar Contraction
// CHECK-NEXT:      teir.primitive relu_scalar ReLU
// CHECK-NOT:   linalg.

// -----

// Copies: linalg.transpose, linalg.copy, a permuting generic, linalg.broadcast.
func.func @copies(%X: memref<2x3x4xf32>, %Y: memref<4x2x3xf32>, %W: memref<2x3x4xf32, strided<[24, 8, 1]>>, %V: memref<3x5xf32>, %U: memref<3xf32>) {
  linalg.transpose ins(%X : memref<2x3x4xf32>) outs(%Y : memref<4x2x3xf32>) permutation = [2, 0, 1]
  linalg.copy ins(%X : memref<2x3x4xf32>) outs(%W : memref<2x3x4xf32, strided<[24, 8, 1]>>)
  linalg.generic {indexing_maps = [affine_map<(a, b, c) -> (c, a, b)>, affine_map<(a, b, c) -> (a, b, c)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%Y : memref<4x2x3xf32>) outs(%X : memref<2x3x4xf32>) {
  ^bb0(%y: f32, %x: f32):
    linalg.yield %y : f32
  }
  linalg.broadcast ins(%U : memref<3xf32>) outs(%V : memref<3x5xf32>) dimensions = [1]
  func.return
}

// CHECK-LABEL: func.func @copies
// CHECK:         teir.config(%{{.*}}, %{{.*}}) : (memref<24xf32>, memref<24xf32>) {
// CHECK-NEXT:      teir.axis d0 extent 4 strides [4, 24] offsets [0, 0]
// CHECK-NEXT:      teir.axis d1 extent 2 strides [48, 12] offsets [0, 0]
// CHECK-NEXT:      teir.axis d2 extent 3 strides [16, 4] offsets [0, 0]
// CHECK-NEXT:      teir.primitive copy_scalar Copy {M = [], N = []} {data_type = "FP32"}
// CHECK:         memref.reinterpret_cast %W to offset: [0], sizes: [44], strides: [1]
// CHECK:           teir.axis d0 extent 2 strides [48, 96] offsets [0, 0]
// CHECK-NEXT:      teir.axis d1 extent 3 strides [16, 32] offsets [0, 0]
// CHECK-NEXT:      teir.axis d2 extent 4 strides [4, 4] offsets [0, 0]
// CHECK-NEXT:      teir.primitive copy_scalar Copy
// CHECK:           teir.axis d0 extent 2 strides [12, 48] offsets [0, 0]
// CHECK-NEXT:      teir.axis d1 extent 3 strides [4, 16] offsets [0, 0]
// CHECK-NEXT:      teir.axis d2 extent 4 strides [24, 4] offsets [0, 0]
// CHECK-NEXT:      teir.primitive copy_scalar Copy
// CHECK:         teir.config(%U, %{{.*}}) : (memref<3xf32>, memref<15xf32>) {
// CHECK-NEXT:      teir.axis d0 extent 3 strides [4, 20] offsets [0, 0]
// CHECK-NEXT:      teir.axis d1 extent 5 strides [0, 4] offsets [0, 0]
// CHECK-NEXT:      teir.primitive copy_scalar Copy
// CHECK-NOT:   linalg.

// -----

// A zero fill alone, a unary ReLU (generic and linalg.max) and one in place.
func.func @elementwise(%X: memref<8xf64>, %Y: memref<8xf64>, %Z: memref<8xf64>) {
  %zero = arith.constant 0.0 : f64
  linalg.fill ins(%zero : f64) outs(%Z : memref<8xf64>)
  linalg.max ins(%Z, %X : memref<8xf64>, memref<8xf64>) outs(%Y : memref<8xf64>)
  linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%X : memref<8xf64>) outs(%Y : memref<8xf64>) {
  ^bb0(%x: f64, %y: f64):
    %r = arith.maximumf %x, %zero : f64
    linalg.yield %r : f64
  }
  linalg.generic {indexing_maps = [affine_map<(i) -> (i)>], iterator_types = ["parallel"]} outs(%X : memref<8xf64>) {
  ^bb0(%x: f64):
    %c0 = arith.constant 0.0 : f64
    %r = arith.maximumf %x, %c0 : f64
    linalg.yield %r : f64
  }
  func.return
}

// CHECK-LABEL: func.func @elementwise
// CHECK:         teir.config(%Z, %Z) : (memref<8xf64>, memref<8xf64>) {
// CHECK-NEXT:      teir.axis d0 extent 8 strides [0, 8] offsets [0, 0]
// CHECK-NEXT:      teir.primitive zero_scalar Zero {M = [], N = []} {data_type = "FP64"}
// CHECK:         teir.config(%X, %Y) : (memref<8xf64>, memref<8xf64>) {
// CHECK-NEXT:      teir.axis d0 extent 8 strides [8, 8] offsets [0, 0]
// CHECK-NEXT:      teir.primitive relu_scalar ReLU {M = [], N = []} {data_type = "FP64"}
// CHECK:         teir.config(%X, %Y) : (memref<8xf64>, memref<8xf64>) {
// CHECK-NEXT:      teir.axis d0 extent 8 strides [8, 8] offsets [0, 0]
// CHECK-NEXT:      teir.primitive relu_scalar ReLU
// CHECK:         teir.config(%X, %X, %X) : (memref<8xf64>, memref<8xf64>, memref<8xf64>) {
// CHECK-NEXT:      teir.axis d0 extent 8 strides [0, 0, 8] offsets [0, 0, 0]
// CHECK-NEXT:      teir.primitive relu_scalar ReLU
// CHECK-NOT:   linalg.

// -----

// A dot product into a 0-d memref with an offset: no free dimension, so the
// offsets ride on an extent-1 dimension around Zero and the reduction.
func.func @dot(%x: memref<6xf32>, %y: memref<6xf32, strided<[2]>>, %r: memref<f32, strided<[], offset: 5>>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%r : memref<f32, strided<[], offset: 5>>)
  linalg.generic {indexing_maps = [affine_map<(k) -> (k)>, affine_map<(k) -> (k)>, affine_map<(k) -> ()>], iterator_types = ["reduction"]} ins(%x, %y : memref<6xf32>, memref<6xf32, strided<[2]>>) outs(%r : memref<f32, strided<[], offset: 5>>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  }
  func.return
}

// CHECK-LABEL: func.func @dot
// CHECK:         memref.reinterpret_cast %r to offset: [0], sizes: [6], strides: [1] : memref<f32, strided<[], offset: 5>> to memref<6xf32>
// CHECK-NEXT:    teir.config(%x, %{{.*}}, %{{.*}}) : (memref<6xf32>, memref<11xf32>, memref<6xf32>) {
// CHECK-NEXT:      teir.axis base extent 1 strides [0, 0, 0] offsets [0, 0, 20]
// CHECK-NEXT:      teir.axis d0 extent 6 strides [4, 8, 0] offsets [0, 0, 0]
// CHECK-NEXT:      teir.primitive zero_scalar Zero
// CHECK-NEXT:      teir.primitive contraction_scalar Contraction
// CHECK-NEXT:      teir.schedule {
// CHECK-NEXT:        teir.iter base over base {
// CHECK-NEXT:          teir.invoke zero -> zero_scalar
// CHECK-NEXT:          teir.iter d0 over d0 {
// CHECK-NEXT:            teir.invoke contraction -> contraction_scalar
// CHECK-NOT:   linalg.

// -----

// A subview's layout offset counts from the base of the buffer it views, so the
// configuration's view is cast from that buffer (%A), not from the subview.
func.func @subview(%A: memref<6x10xf32>, %B: memref<8x16xf32>, %C: memref<4x16xf32>) {
  %a = memref.subview %A[1, 2] [4, 8] [1, 1] : memref<6x10xf32> to memref<4x8xf32, strided<[10, 1], offset: 12>>
  linalg.matmul ins(%a, %B : memref<4x8xf32, strided<[10, 1], offset: 12>>, memref<8x16xf32>) outs(%C : memref<4x16xf32>)
  func.return
}

// CHECK-LABEL: func.func @subview
// CHECK-NEXT:    %[[A:.*]] = memref.reinterpret_cast %A to offset: [0], sizes: [50], strides: [1] : memref<6x10xf32> to memref<50xf32>
// CHECK:         teir.config(%[[A]], %{{.*}}, %{{.*}})
// CHECK-NEXT:      teir.axis d0 extent 4 strides [40, 0, 64] offsets [48, 0, 0]
// CHECK-NEXT:      teir.axis d1 extent 16 strides [0, 4, 4] offsets [0, 0, 0]
// CHECK-NEXT:      teir.axis d2 extent 8 strides [4, 64, 0] offsets [0, 0, 0]
// CHECK-NOT:   linalg.

// -----

// The fill is not just before the matmul (a copy writes memory in between), so
// each op gets its own configuration; f16 converts (FP16), its reduction index
// the Contraction's K role (one rounding per store), not a loop.
func.func @no_merge(%A: memref<4x8xf16>, %B: memref<8x16xf16>, %C: memref<4x16xf16>, %X: memref<4xf16>, %Y: memref<4xf16>) {
  %zero = arith.constant 0.0 : f16
  linalg.fill ins(%zero : f16) outs(%C : memref<4x16xf16>)
  linalg.copy ins(%X : memref<4xf16>) outs(%Y : memref<4xf16>)
  linalg.matmul ins(%A, %B : memref<4x8xf16>, memref<8x16xf16>) outs(%C : memref<4x16xf16>)
  func.return
}

// CHECK-LABEL: func.func @no_merge
// CHECK:         teir.primitive zero_scalar Zero {M = [], N = []} {data_type = "FP16"}
// CHECK:         teir.primitive copy_scalar Copy {M = [], N = []} {data_type = "FP16"}
// CHECK:         teir.config
// CHECK-NOT:       Zero
// CHECK:           teir.primitive contraction_k Contraction {M = [], N = [], K = [d2]} {data_type = "FP16"}
// CHECK-NEXT:      teir.schedule {
// CHECK-NEXT:        teir.iter d0 over d0 {
// CHECK-NEXT:          teir.iter d1 over d1 {
// CHECK-NEXT:            teir.invoke contraction -> contraction_k
// CHECK-NEXT:          }
// CHECK-NEXT:        }
// CHECK-NEXT:      }
// CHECK-NOT:   linalg.

// -----

// A non-projected map (a convolution-like d0 + d1).
func.func @non_projected(%A: memref<6xf32>, %B: memref<3xf32>, %C: memref<4xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, k) -> (i + k)>, affine_map<(i, k) -> (k)>, affine_map<(i, k) -> (i)>], iterator_types = ["parallel", "reduction"]} ins(%A, %B : memref<6xf32>, memref<3xf32>) outs(%C : memref<4xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  }
  func.return
}

// CHECK-LABEL: func.func @non_projected
// CHECK-NOT:   teir.config
// REMARK-LABEL: sym_name = "non_projected"
// REMARK:       teir.not_converted = "indexing map #0 (d0, d1) -> ((d0 + d1)) is not a projected permutation

// -----

// Element-wise bodies other than copy and maximumf(x, +0.0), also as named ops.
func.func @other_body(%A: memref<4xf32>, %B: memref<4xf32>, %C: memref<4xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%A, %B : memref<4xf32>, memref<4xf32>) outs(%C : memref<4xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %s = arith.subf %a, %b : f32
    linalg.yield %s : f32
  }
  linalg.add ins(%A, %B : memref<4xf32>, memref<4xf32>) outs(%C : memref<4xf32>)
  func.return
}

// CHECK-LABEL: func.func @other_body
// CHECK-NOT:   teir.config
// REMARK-LABEL: sym_name = "other_body"
// REMARK:       teir.not_converted = "the body computes arith.subf; TEIR has multiply-accumulate, copy, zero (fill 0.0) and ReLU (maximumf with +0.0)
// REMARK:       teir.not_converted = "the body computes arith.addf;

// -----

// A reduction whose body is not a multiply-accumulate.
func.func @sum(%A: memref<4x3xf32>, %C: memref<4xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, k) -> (i, k)>, affine_map<(i, k) -> (i)>], iterator_types = ["parallel", "reduction"]} ins(%A : memref<4x3xf32>) outs(%C : memref<4xf32>) {
  ^bb0(%a: f32, %c: f32):
    %s = arith.addf %a, %c : f32
    linalg.yield %s : f32
  }
  func.return
}

// CHECK-LABEL: func.func @sum
// CHECK-NOT:   teir.config
// REMARK-LABEL: sym_name = "sum"
// REMARK:       teir.not_converted = "a reduction (the output is indexed by 1 of 2 loops) with body arith.addf; TEIR reduces only by multiply-accumulate

// -----

// Dynamic shapes and dynamic strides.
func.func @dynamic(%A: memref<?x8xf32>, %B: memref<8x16xf32>, %C: memref<?x16xf32>, %D: memref<4x16xf32, strided<[?, 1]>>, %E: memref<4x8xf32>) {
  linalg.matmul ins(%A, %B : memref<?x8xf32>, memref<8x16xf32>) outs(%C : memref<?x16xf32>)
  linalg.matmul ins(%E, %B : memref<4x8xf32>, memref<8x16xf32>) outs(%D : memref<4x16xf32, strided<[?, 1]>>)
  func.return
}

// CHECK-LABEL: func.func @dynamic
// CHECK-NOT:   teir.config
// REMARK-LABEL: sym_name = "dynamic"
// REMARK:       teir.not_converted = "dynamic shape in memref<?x16xf32>
// REMARK:       teir.not_converted = "dynamic stride or offset in memref<4x16xf32, strided<[?, 1]>>

// -----

// Tensor semantics (bufferize first).
func.func @tensors(%A: tensor<4x8xf32>, %B: tensor<8x16xf32>, %C: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %r = linalg.matmul ins(%A, %B : tensor<4x8xf32>, tensor<8x16xf32>) outs(%C : tensor<4x16xf32>) -> tensor<4x16xf32>
  func.return %r : tensor<4x16xf32>
}

// CHECK-LABEL: func.func @tensors
// CHECK-NOT:   teir.config
// REMARK-LABEL: sym_name = "tensors"
// REMARK:       teir.not_converted = "tensor semantics: convert-linalg-to-teir works on memrefs (bufferize first: mlir-opt --one-shot-bufferize='bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map' --buffer-results-to-out-params)

// -----

// Integer and mixed element types.
func.func @types(%A: memref<4x8xi32>, %B: memref<8x16xi32>, %C: memref<4x16xi32>, %H: memref<4x8xf16>, %F: memref<8x16xf32>, %G: memref<4x16xf32>) {
  linalg.matmul ins(%A, %B : memref<4x8xi32>, memref<8x16xi32>) outs(%C : memref<4x16xi32>)
  linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (k, j)>, affine_map<(i, j, k) -> (i, j)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%H, %F : memref<4x8xf16>, memref<8x16xf32>) outs(%G : memref<4x16xf32>) {
  ^bb0(%h: f16, %f: f32, %g: f32):
    %w = arith.extf %h : f16 to f32
    %p = arith.mulf %w, %f : f32
    %s = arith.addf %g, %p : f32
    linalg.yield %s : f32
  }
  func.return
}

// CHECK-LABEL: func.func @types
// CHECK-NOT:   teir.config
// REMARK-LABEL: sym_name = "types"
// REMARK:       teir.not_converted = "element type i32: TEIR primitives work on f16, bf16, f32 and f64
// REMARK:       teir.not_converted = "mixed element types (f16, f32); TEIR computes in one type

// -----

// Fills with anything but +0.0 (-0.0 included: Zero writes +0.0).
func.func @fills(%C: memref<4xf32>) {
  %one = arith.constant 1.0 : f32
  %negzero = arith.constant -0.0 : f32
  linalg.fill ins(%one : f32) outs(%C : memref<4xf32>)
  linalg.fill ins(%negzero : f32) outs(%C : memref<4xf32>)
  func.return
}

// CHECK-LABEL: func.func @fills
// CHECK-NOT:   teir.config
// REMARK-LABEL: sym_name = "fills"
// REMARK:       teir.not_converted = "a fill with 1.000000e+00 : f32, not the constant +0.0
// REMARK:       teir.not_converted = "a fill with -0.000000e+00 : f32, not the constant +0.0

// -----

// A generic that yields +0.0 to a part of out (a constant in its map: column 0,
// column 3) is no fill: refused by its map, and the matmul after it accumulates
// into C (no Zero merged before it).
func.func @partial_fill(%C: memref<4x8xf32>, %A: memref<4x8xf32>, %B: memref<8x16xf32>, %D: memref<4x16xf32>) {
  %z = arith.constant 0.0 : f32
  linalg.generic {indexing_maps = [affine_map<(i) -> ()>, affine_map<(i) -> (i, 0)>], iterator_types = ["parallel"]} ins(%z : f32) outs(%C : memref<4x8xf32>) {
  ^bb0(%x: f32, %y: f32):
    linalg.yield %x : f32
  }
  linalg.generic {indexing_maps = [affine_map<(i) -> ()>, affine_map<(i) -> (i, 3)>], iterator_types = ["parallel"]} ins(%z : f32) outs(%D : memref<4x16xf32>) {
  ^bb0(%x: f32, %y: f32):
    linalg.yield %x : f32
  }
  linalg.matmul ins(%A, %B : memref<4x8xf32>, memref<8x16xf32>) outs(%D : memref<4x16xf32>)
  func.return
}

// CHECK-LABEL: func.func @partial_fill
// CHECK-NOT:   Zero
// CHECK:       teir.config
// CHECK-NOT:   Zero
// CHECK:       Contraction
// CHECK-NOT:   Zero
// CHECK:       func.return
// REMARK-LABEL: sym_name = "partial_fill"
// REMARK:       teir.not_converted = "indexing map #1 (d0) -> (d0, 0) is not a projected permutation
// REMARK:       teir.not_converted = "indexing map #1 (d0) -> (d0, 3) is not a projected permutation

// -----

// linalg.max against a buffer not known to be zero.
func.func private @clobber(memref<4xf32>)

func.func @max_not_zero(%X: memref<4xf32>, %Y: memref<4xf32>, %Z: memref<4xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.max ins(%X, %Y : memref<4xf32>, memref<4xf32>) outs(%Y : memref<4xf32>)
  linalg.fill ins(%zero : f32) outs(%Z : memref<4xf32>)
  func.call @clobber(%Z) : (memref<4xf32>) -> ()
  linalg.max ins(%X, %Z : memref<4xf32>, memref<4xf32>) outs(%Y : memref<4xf32>)
  func.return
}

// The first max has no zero buffer; the second one's is clobbered by a call
// (the fill itself converts).
// CHECK-LABEL: func.func @max_not_zero
// CHECK-NEXT:    linalg.max
// CHECK-NEXT:    teir.config(%Z, %Z)
// CHECK:         func.call @clobber(%Z)
// CHECK-NEXT:    linalg.max
// REMARK-LABEL: sym_name = "max_not_zero"
// REMARK:       teir.not_converted = "linalg.max against a buffer that is not known to hold +0.0
// REMARK:       teir.not_converted = "linalg.max against a buffer that is not known to hold +0.0

// -----

// maximumf with another constant, and maxnumf (which drops NaN).
func.func @relu_bodies(%X: memref<4xf32>, %Y: memref<4xf32>) {
  %half = arith.constant 0.5 : f32
  linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%X : memref<4xf32>) outs(%Y : memref<4xf32>) {
  ^bb0(%x: f32, %y: f32):
    %r = arith.maximumf %x, %half : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%X : memref<4xf32>) outs(%Y : memref<4xf32>) {
  ^bb0(%x: f32, %y: f32):
    %c0 = arith.constant 0.0 : f32
    %r = arith.maxnumf %x, %c0 : f32
    linalg.yield %r : f32
  }
  func.return
}

// CHECK-LABEL: func.func @relu_bodies
// CHECK-NOT:   teir.config
// REMARK-LABEL: sym_name = "relu_bodies"
// REMARK:       teir.not_converted = "the body computes arith.maximumf; TEIR has
// REMARK:       teir.not_converted = "the body computes arith.constant, arith.maxnumf; TEIR has

// -----

// An output that aliases an input (in place, except ReLU on one element each).
func.func @aliasing(%X: memref<4x4xf32>, %A: memref<4x4xf32>) {
  linalg.transpose ins(%X : memref<4x4xf32>) outs(%X : memref<4x4xf32>) permutation = [1, 0]
  linalg.matmul ins(%X, %A : memref<4x4xf32>, memref<4x4xf32>) outs(%X : memref<4x4xf32>)
  %zero = arith.constant 0.0 : f32
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (j, i)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%X : memref<4x4xf32>) outs(%X : memref<4x4xf32>) {
  ^bb0(%x: f32, %y: f32):
    %r = arith.maximumf %x, %zero : f32
    linalg.yield %r : f32
  }
  func.return
}

// CHECK-LABEL: func.func @aliasing
// CHECK-NOT:   teir.config
// REMARK-LABEL: sym_name = "aliasing"
// REMARK:       teir.not_converted = "the output may alias input #0
// REMARK:       teir.not_converted = "the output may alias input #0
// REMARK:       teir.not_converted = "the output may alias input #0

// -----

// A negative stride, an output overlapping itself (stride 1 twice), a memory space.
func.func @layouts(%X: memref<4xf32>, %N: memref<4xf32, strided<[-1], offset: 3>>, %O: memref<4x2xf32, strided<[1, 1]>>, %P: memref<4x2xf32>, %S: memref<4xf32, 1>) {
  linalg.copy ins(%X : memref<4xf32>) outs(%N : memref<4xf32, strided<[-1], offset: 3>>)
  linalg.transpose ins(%P : memref<4x2xf32>) outs(%O : memref<4x2xf32, strided<[1, 1]>>) permutation = [0, 1]
  linalg.copy ins(%X : memref<4xf32>) outs(%S : memref<4xf32, 1>)
  func.return
}

// CHECK-LABEL: func.func @layouts
// CHECK-NOT:   teir.config
// REMARK-LABEL: sym_name = "layouts"
// REMARK:       teir.not_converted = "negative stride or offset in memref<4xf32, strided<[-1], offset: 3>>; TEIR strides are non-negative
// REMARK:       teir.not_converted = "overlapping output: the free dimensions 'd0', 'd1' reach some out element twice
// REMARK:       teir.not_converted = "memory space 1 : i64 in memref<4xf32, 1 : i64>

// -----

// Layouts other than identity and strided<>.
func.func @affine_layout(%X: memref<4x2xf32>, %Y: memref<4x2xf32, affine_map<(i, j) -> (j, i)>>) {
  linalg.copy ins(%X : memref<4x2xf32>) outs(%Y : memref<4x2xf32, affine_map<(i, j) -> (j, i)>>)
  func.return
}

// CHECK-LABEL: func.func @affine_layout
// CHECK-NOT:   teir.config
// REMARK-LABEL: sym_name = "affine_layout"
// REMARK:       teir.not_converted = "layout affine_map<(d0, d1) -> (d1, d0)> in memref<4x2xf32, affine_map<(d0, d1) -> (d1, d0)>>; only identity and strided<> layouts

// -----

// Empty memrefs (TEIR axes have positive extents).
func.func @empty(%X: memref<0x4xf32>, %Y: memref<0x4xf32>) {
  linalg.copy ins(%X : memref<0x4xf32>) outs(%Y : memref<0x4xf32>)
  func.return
}

// CHECK-LABEL: func.func @empty
// CHECK-NOT:   teir.config
// REMARK-LABEL: sym_name = "empty"
// REMARK:       teir.not_converted = "memref<0x4xf32> is empty; TEIR axes have positive extents

// -----

// A copy whose output misses a loop would write each element repeatedly.
func.func @repeated_writes(%X: memref<4x3xf32>, %Y: memref<4xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]} ins(%X : memref<4x3xf32>) outs(%Y : memref<4xf32>) {
  ^bb0(%x: f32, %y: f32):
    linalg.yield %x : f32
  }
  func.return
}

// CHECK-LABEL: func.func @repeated_writes
// CHECK-NOT:   teir.config
// REMARK-LABEL: sym_name = "repeated_writes"
// REMARK:       teir.not_converted = "a reduction (the output is indexed by 1 of 2 loops) with body only a linalg.yield

// -----

// Several outputs.
func.func @two_outputs(%X: memref<4xf32>, %Y: memref<4xf32>, %Z: memref<4xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%X : memref<4xf32>) outs(%Y, %Z : memref<4xf32>, memref<4xf32>) {
  ^bb0(%x: f32, %y: f32, %z: f32):
    linalg.yield %x, %x : f32, f32
  }
  func.return
}

// CHECK-LABEL: func.func @two_outputs
// CHECK-NOT:   teir.config
// REMARK-LABEL: sym_name = "two_outputs"
// REMARK:       teir.not_converted = "2 outputs; TEIR writes one tensor

// -----

// memref.copy in MLIR's custom form, as one-shot bufferization copies a
// temporary into an out-parameter: a Copy; the temporary stays a memref.alloc.
func.func @bufferized(%A: memref<4x8xf32>, %B: memref<8x16xf32>, %C: memref<4x16xf32>) {
  %alloc = memref.alloc() {alignment = 64 : i64} : memref<4x16xf32>
  linalg.matmul ins(%A, %B : memref<4x8xf32>, memref<8x16xf32>) outs(%alloc : memref<4x16xf32>)
  memref.copy %alloc, %C : memref<4x16xf32> to memref<4x16xf32>
  memref.dealloc %alloc : memref<4x16xf32>
  func.return
}

// CHECK-LABEL: func.func @bufferized
// CHECK-NEXT:    %alloc = memref.alloc() {alignment = 64 : i64} : memref<4x16xf32>
// CHECK:         %[[T:.*]] = memref.reinterpret_cast %alloc to offset: [0], sizes: [64], strides: [1]
// CHECK:         teir.config(%{{.*}}, %{{.*}}, %[[T]])
// CHECK:         teir.primitive contraction_scalar Contraction
// CHECK:         %[[S:.*]] = memref.reinterpret_cast %alloc to offset: [0], sizes: [64], strides: [1]
// CHECK-NEXT:    %[[D:.*]] = memref.reinterpret_cast %C to offset: [0], sizes: [64], strides: [1]
// CHECK-NEXT:    teir.config(%[[S]], %[[D]]) : (memref<64xf32>, memref<64xf32>) {
// CHECK-NEXT:      teir.axis d0 extent 4 strides [64, 64] offsets [0, 0]
// CHECK-NEXT:      teir.axis d1 extent 16 strides [4, 4] offsets [0, 0]
// CHECK-NEXT:      teir.primitive copy_scalar Copy
// CHECK:         memref.dealloc %alloc : memref<4x16xf32>
// CHECK-NOT:   memref.copy

// -----

// memref.copy of a dynamic shape stays, with its reason.
func.func @copy_dynamic(%a: memref<?xf32>, %b: memref<?xf32>) {
  memref.copy %a, %b : memref<?xf32> to memref<?xf32>
  func.return
}

// CHECK-LABEL: func.func @copy_dynamic
// CHECK-NOT:   teir.config
// REMARK-LABEL: sym_name = "copy_dynamic"
// REMARK:       "memref.copy"(%a, %b) {teir.not_converted = "dynamic shape in memref<?xf32>"}

// -----

// linalg.fill as `mlir-opt --linalg-generalize-named-ops` prints it: a generic
// yielding its scalar input, +0.0, joins the contraction after it as Zero.
func.func @generalized_fill(%A: memref<4x8xf32>, %B: memref<8x16xf32>, %C: memref<4x16xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.generic {indexing_maps = [affine_map<(i, j) -> ()>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%zero : f32) outs(%C : memref<4x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  linalg.matmul ins(%A, %B : memref<4x8xf32>, memref<8x16xf32>) outs(%C : memref<4x16xf32>)
  func.return
}

// CHECK-LABEL: func.func @generalized_fill
// CHECK:         teir.primitive zero_scalar Zero
// CHECK-NEXT:    teir.primitive contraction_scalar Contraction
// CHECK-NOT:   linalg.

// -----

// Bodies that do not yield one value of the output's type (the verifier lets
// them through): refused, saying what the body yields.
func.func @yields(%A: memref<4x8xf32>, %B: memref<4x8xf32>) {
  %c = arith.constant 0.0 : f64
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%A : memref<4x8xf32>) outs(%B : memref<4x8xf32>) {
  ^bb0(%x: f32, %y: f32):
    linalg.yield
  }
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%A : memref<4x8xf32>) outs(%B : memref<4x8xf32>) {
  ^bb0(%x: f32, %y: f32):
    linalg.yield %c : f64
  }
  func.return
}

// CHECK-LABEL: func.func @yields
// CHECK-NOT:   teir.config
// REMARK-LABEL: sym_name = "yields"
// REMARK:       teir.not_converted = "the body yields 0 values, not the output's one"
// REMARK:       teir.not_converted = "the body yields a f64, not the output's f32"

// -----

// An output with a zero stride (MLIR's layouts have none) writes its elements
// many times: refused; an input may broadcast along one.
func.func @zero_stride(%A: memref<4x8xf32, strided<[0, 1]>>, %B: memref<8x5xf32>, %C: memref<4x5xf32>, %D: memref<4x5xf32, strided<[0, 1]>>) {
  linalg.matmul ins(%A, %B : memref<4x8xf32, strided<[0, 1]>>, memref<8x5xf32>) outs(%C : memref<4x5xf32>)
  linalg.matmul ins(%A, %B : memref<4x8xf32, strided<[0, 1]>>, memref<8x5xf32>) outs(%D : memref<4x5xf32, strided<[0, 1]>>)
  func.return
}

// CHECK-LABEL: func.func @zero_stride
// CHECK:       teir.config
// CHECK-NOT:   teir.config
// CHECK:       func.return
// REMARK-LABEL: sym_name = "zero_stride"
// REMARK:       teir.not_converted = "an output with a zero stride in memref<4x5xf32, strided<[0, 1]>> writes an element many times
