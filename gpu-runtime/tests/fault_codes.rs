//! The runtime's fault messages agree with the compiler's fault codes.

#[test]
fn runtime_and_compiler_agree_on_fault_codes() {
    for fault in ptx_codegen::Fault::ALL {
        assert_eq!(gpu_runtime::__private::fault_message(fault.code()), fault.message(), "{fault:?}");
    }
}
