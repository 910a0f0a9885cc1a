package fidelity
