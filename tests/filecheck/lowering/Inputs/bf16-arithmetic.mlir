// bf16 arithmetic, which the translation (writing bf16 as i16) refuses by name.
func.func @adds(%m: memref<?xbf16>) {
  %c0 = arith.constant 0 : index
  %x = memref.load %m[%c0] : memref<?xbf16>
  %y = arith.addf %x, %x : bf16
  memref.store %y, %m[%c0] : memref<?xbf16>
  func.return
}
