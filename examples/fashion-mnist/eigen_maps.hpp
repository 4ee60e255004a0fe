// How the models see their float buffers: row-major Eigen matrices and row vectors mapped over
// memory they do not own (the parameter, gradient and activation buffers).
#pragma once

#include <Eigen/Core>

namespace fmnist {

using Matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using MatrixMap = Eigen::Map<Matrix>;
using ConstMatrixMap = Eigen::Map<const Matrix>;
using RowMap = Eigen::Map<Eigen::RowVectorXf>;
using ConstRowMap = Eigen::Map<const Eigen::RowVectorXf>;

}  // namespace fmnist
