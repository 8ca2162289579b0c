//! Recurrent network kernels: RNN, GRU, LSTM.
