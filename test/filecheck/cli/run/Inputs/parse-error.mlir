func.func @f() {
  %x = tv.bogus
}
