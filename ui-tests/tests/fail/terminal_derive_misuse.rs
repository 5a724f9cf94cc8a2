// `#[terminal]` marks variants, takes no arguments there, and the derive is not for unions.
#[derive(Debug, thiserror::Error, kubeward::Terminal)]
#[terminal]
pub enum OnTheEnum {
    #[error("a")]
    A,
}

#[derive(Debug, thiserror::Error, kubeward::Terminal)]
pub enum WithArguments {
    #[terminal(always)]
    #[error("b")]
    B,
}

#[derive(kubeward::Terminal)]
pub union Bits {
    a: u32,
}

fn main() {}
