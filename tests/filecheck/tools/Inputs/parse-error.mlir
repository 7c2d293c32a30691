func.func @k() {
  teir.axis
}
