package check

// KernelForTest gives the external test package (check_test, which may
// import package dlib: dlib imports check) the running kernel's types.
var KernelForTest = kernelForTest
