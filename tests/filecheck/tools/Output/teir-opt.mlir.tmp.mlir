builtin.module {
  func.func @perm(%in0: memref<?xf32>, %out: memref<?xf32>) {
    teir.config(%in0, %out) : (memref<?xf32>, memref<?xf32>) {
      teir.axis a extent 2 strides [12, 4] offsets [0, 0]
      teir.axis bb extent 3 strides [4, 8] offsets [0, 0]
      teir.primitive copy_scalar Copy {M = [], N = []} {data_type = "FP32"}
      teir.schedule {
        teir.iter a over a parallel {
          teir.iter b over bb {
            teir.invoke copy -> copy_scalar [last(a)]
          }
        }
      }
    }
    func.return
  }
}

