func.func @f() {ÿ
