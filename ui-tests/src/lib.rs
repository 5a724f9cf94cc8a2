//! trybuild cases for the kubeward macros live in `pass/` and `fail/`.
