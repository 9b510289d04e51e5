func.func @f(%a: index) {
  %x = arith.addi %a : index
  return
}
