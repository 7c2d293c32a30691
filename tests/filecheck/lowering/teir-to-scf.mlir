// RUN: teir-opt %s --split-input-file -p teir-to-scf,canonicalize,cse | filecheck %s

// Zero, Copy and ReLU over role axis b; guards become scf.if on index
// comparisons; tile addresses add offset + stride * index in elements (the
// out offset of 8 bytes on a is 2 floats; b's 16-byte stride on out is 4).
func.func @zero_copy_relu(%in0: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %out) : (memref<?xf32>, memref<?xf32>) {
    teir.axis a extent 4 strides [32, 4] offsets [0, 8]
    teir.axis b extent 8 strides [4, 16] offsets [0, 0]
    teir.primitive zero Zero {M = [b], N = []} {data_type = "FP32"}
    teir.primitive copy Copy {M = [b], N = []} {data_type = "FP32"}
    teir.primitive relu ReLU {M = [], N = [b]} {data_type = "FP32"}
    teir.schedule {
      teir.iter a over a {
        teir.invoke z -> zero [first(a)]
        teir.invoke c -> copy
        teir.invoke r -> relu [last(a)]
      }
    }
  }
  func.return
}

// The tensors do not overlap where the kernel writes (compile_kernel refuses such arrays):
// CHECK-LABEL: func.func @zero_copy_relu(%in0: memref<?xf32> {llvm.noalias}, %out: memref<?xf32> {llvm.noalias})
// CHECK-DAG:     %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[C4:.*]] = arith.constant 4 : index
// CHECK-DAG:     %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG:     %[[C8:.*]] = arith.constant 8 : index
// CHECK-DAG:     %[[C2:.*]] = arith.constant 2 : index
// CHECK-DAG:     %[[C3:.*]] = arith.constant 3 : index
// CHECK:         scf.for %a = %[[C0]] to %[[C4]] step %[[C1]] {
// CHECK-NEXT:      %[[IN_A:.*]] = arith.muli %a, %[[C8]] : index
// CHECK-NEXT:      %[[OUT_A:.*]] = arith.addi %a, %[[C2]] : index
// CHECK-NEXT:      %[[FIRST:.*]] = arith.cmpi eq, %a, %[[C0]] : index
// CHECK-NEXT:      scf.if %[[FIRST]] {
// CHECK-NEXT:        %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:        scf.for %b = %[[C0]] to %[[C8]] step %[[C1]] {
// CHECK-NEXT:          %[[B4:.*]] = arith.muli %b, %[[C4]] : index
// CHECK-NEXT:          %[[OUT:.*]] = arith.addi %[[OUT_A]], %[[B4]] : index
// CHECK-NEXT:          memref.store %[[ZERO]], %out[%[[OUT]]] : memref<?xf32>
// CHECK:           scf.for %b_1 = %[[C0]] to %[[C8]] step %[[C1]] {
// CHECK-NEXT:        %[[IN:.*]] = arith.addi %[[IN_A]], %b_1 : index
// CHECK-NEXT:        %[[B4:.*]] = arith.muli %b_1, %[[C4]] : index
// CHECK-NEXT:        %[[OUT:.*]] = arith.addi %[[OUT_A]], %[[B4]] : index
// CHECK-NEXT:        %[[V:.*]] = memref.load %in0[%[[IN]]] : memref<?xf32>
// CHECK-NEXT:        memref.store %[[V]], %out[%[[OUT]]] : memref<?xf32>
// CHECK:           %[[LAST:.*]] = arith.cmpi eq, %a, %[[C3]] : index
// CHECK-NEXT:      scf.if %[[LAST]] {
// CHECK:             %[[X:.*]] = memref.load %in0
// CHECK-NEXT:        %[[NEG:.*]] = arith.cmpf olt, %[[X]], %[[Z:.*]] : f32
// CHECK-NEXT:        %[[R:.*]] = arith.select %[[NEG]], %[[Z]], %[[X]] : f32
// CHECK-NEXT:        memref.store %[[R]], %out

// -----

// Free axes run with the smallest out stride innermost (n outer, m inner).
// A Contraction whose K axes have stride 0 on out keeps its accumulator in
// iter_args across the K loops; a parallel node over p with a parallel only
// child r becomes one two-dimensional scf.parallel; the in-place ReLU of a
// three-tensor configuration reads out. (With M = [m, n] and no N axis the
// Contraction is not a GEMM/BRGEMM, so it gets these scalar loops rather than
// a microkernel, which would also fuse the ReLU: see teir-to-scf-microkernel.mlir.)

func.func @brgemm(%in0: memref<?xf64>, %in1: memref<?xf64>, %out: memref<?xf64>) {
  teir.config(%in0, %in1, %out) : (memref<?xf64>, memref<?xf64>, memref<?xf64>) {
    teir.axis p extent 2 strides [0, 64, 64] offsets [0, 0, 0]
    teir.axis r extent 3 strides [64, 0, 128] offsets [0, 0, 0]
    teir.axis m extent 2 strides [8, 0, 8] offsets [0, 0, 0]
    teir.axis n extent 2 strides [0, 32, 32] offsets [0, 0, 0]
    teir.axis t extent 2 strides [384, 16, 0] offsets [0, 0, 0]
    teir.axis k extent 2 strides [16, 8, 0] offsets [0, 0, 0]
    teir.primitive mm Contraction {M = [m, n], N = [], K = [t, k]} {data_type = "FP64"}
    teir.primitive act ReLU {M = [m], N = [n]} {data_type = "FP64"}
    teir.schedule {
      teir.iter p over p parallel {
        teir.iter r over r parallel {
          teir.invoke mm_call -> mm
          teir.invoke relu -> act
        }
      }
    }
  }
  func.return
}

// CHECK-LABEL: func.func @brgemm
// CHECK:         "scf.parallel"({{.*}}) <{operandSegmentSizes = array<i32: 2, 2, 2, 0>}> ({
// CHECK-NEXT:    ^{{.*}}(%p: index, %r: index):
// CHECK:           scf.for %n = {{.*}} {
// CHECK:             scf.for %m = {{.*}} {
// CHECK:               %[[INIT:.*]] = memref.load %out[%[[O:.*]]] : memref<?xf64>
// CHECK-NEXT:          %[[T:.*]] = scf.for %t = {{.*}} iter_args(%acc = %[[INIT]]) -> (f64) {
// CHECK:                 %[[K:.*]] = scf.for %k = {{.*}} iter_args(%acc_1 = %acc) -> (f64) {
// CHECK:                   %[[A:.*]] = memref.load %in0
// CHECK-NEXT:              %[[B:.*]] = memref.load %in1
// CHECK-NEXT:              %[[AB:.*]] = arith.mulf %[[A]], %[[B]] : f64
// CHECK-NEXT:              %[[SUM:.*]] = arith.addf %acc_1, %[[AB]] : f64
// CHECK-NEXT:              scf.yield %[[SUM]] : f64
// CHECK:                 scf.yield %[[K]] : f64
// CHECK:               memref.store %[[T]], %out[%[[O]]] : memref<?xf64>
// CHECK:           scf.for %n_1 = {{.*}} {
// CHECK:             scf.for %m_1 = {{.*}} {
// CHECK:               %[[V:.*]] = memref.load %out[%[[R:.*]]] : memref<?xf64>
// CHECK-NEXT:          %[[NEG:.*]] = arith.cmpf olt, %[[V]], %{{.*}} : f64
// CHECK-NEXT:          %[[RELU:.*]] = arith.select %[[NEG]], %{{.*}}, %[[V]] : f64
// CHECK-NEXT:          memref.store %[[RELU]], %out[%[[R]]] : memref<?xf64>
// CHECK:           scf.reduce

// -----

// A scalar Contraction (no role axes) is one multiply-add on the tile;
// a K axis with a non-zero stride on out accumulates element by element.

func.func @scalar(%in0: memref<?xf32>, %in1: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %in1, %out) : (memref<?xf32>, memref<?xf32>, memref<?xf32>) {
    teir.axis k extent 3 strides [4, 4, 4] offsets [0, 0, 0]
    teir.primitive fma Contraction {M = [], N = [], K = []} {data_type = "FP32"}
    teir.primitive odd Contraction {M = [], N = [], K = [k]} {data_type = "FP32"}
    teir.schedule {
      teir.iter k over k {
        teir.invoke f -> fma
      }
      teir.invoke o -> odd
    }
  }
  func.return
}

// CHECK-LABEL: func.func @scalar
// CHECK:         scf.for %k = {{.*}} {
// CHECK-NEXT:      %[[A:.*]] = memref.load %in0[%k] : memref<?xf32>
// CHECK-NEXT:      %[[B:.*]] = memref.load %in1[%k] : memref<?xf32>
// CHECK-NEXT:      %[[C:.*]] = memref.load %out[%k] : memref<?xf32>
// CHECK-NEXT:      %[[AB:.*]] = arith.mulf %[[A]], %[[B]] : f32
// CHECK-NEXT:      %[[S:.*]] = arith.addf %[[C]], %[[AB]] : f32
// CHECK-NEXT:      memref.store %[[S]], %out[%k] : memref<?xf32>
// CHECK:         scf.for %k_1 = {{.*}} {
// CHECK-NOT:       iter_args
// CHECK:           memref.store {{.*}}, %out[%k_1] : memref<?xf32>

// -----

// teir-to-scf reads the microkernel decision from the IR (teir-match-gemm's
// `kernel` attribute) and decides nothing itself. @no_kernel_attribute is
// GEMM-shaped but carries no attribute (teir-match-gemm did not run), so it gets
// the general loop nest: scalar loops, the accumulator in iter_args across k.
// @kernel_attribute is the same tile with the attribute: a vector microkernel.

func.func @no_kernel_attribute(%in0: memref<?xf32>, %in1: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %in1, %out) : (memref<?xf32>, memref<?xf32>, memref<?xf32>) {
    teir.axis m extent 8 strides [4, 0, 4] offsets [0, 0, 0]
    teir.axis n extent 4 strides [0, 32, 32] offsets [0, 0, 0]
    teir.axis k extent 8 strides [32, 4, 0] offsets [0, 0, 0]
    teir.primitive mm Contraction {M = [m], N = [n], K = [k]} {data_type = "FP32"}
    teir.schedule {
      teir.invoke c -> mm
    }
  }
  func.return
}

func.func @kernel_attribute(%in0: memref<?xf32>, %in1: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %in1, %out) : (memref<?xf32>, memref<?xf32>, memref<?xf32>) {
    teir.axis m extent 8 strides [4, 0, 4] offsets [0, 0, 0]
    teir.axis n extent 4 strides [0, 32, 32] offsets [0, 0, 0]
    teir.axis k extent 8 strides [32, 4, 0] offsets [0, 0, 0]
    teir.primitive mm Contraction {M = [m], N = [n], K = [k]} {data_type = "FP32"} attributes {kernel = #teir.kernel<gemm m = 8, n = 4, k = 8, lda = 8, ldb = 8, ldc = 8, trans = "NNN">}
    teir.schedule {
      teir.invoke c -> mm
    }
  }
  func.return
}

// CHECK-LABEL: func.func @no_kernel_attribute
// CHECK-NOT:     vector.
// CHECK:         scf.for %n = {{.*}} {
// CHECK:           scf.for %m = {{.*}} {
// CHECK:             scf.for %k = {{.*}} iter_args(%acc = %{{.*}}) -> (f32) {
// CHECK:               arith.mulf %{{.*}}, %{{.*}} : f32
// CHECK-NOT:     vector.
// CHECK-LABEL: func.func @kernel_attribute
// CHECK:         vector.fma
