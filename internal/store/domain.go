package store

// The domain's words, declared in the root package (github.com/locrisk/locrisk),
// under the names this package has always used for them, so that its
// SQL code reads as before. Code outside the store uses the root names.

import "github.com/locrisk/locrisk"

const BatchCompleted = locrisk.BatchCompleted
const BatchProcessing = locrisk.BatchProcessing
const BucketAPI = locrisk.BucketAPI
const BucketBulk = locrisk.BucketBulk
const BucketManual = locrisk.BucketManual
const DefaultMonthlyQuota = locrisk.DefaultMonthlyQuota
const DefaultRateLimit = locrisk.DefaultRateLimit
const DeliveryFailed = locrisk.DeliveryFailed
const DeliveryPending = locrisk.DeliveryPending
const DeliverySucceeded = locrisk.DeliverySucceeded
const ErrorEndpointDisabled = locrisk.ErrorEndpointDisabled
const ItemRejected = locrisk.ItemRejected
const MaxActiveEndpoints = locrisk.MaxActiveEndpoints
const MaxKeyNameLen = locrisk.MaxKeyNameLen
const ScopeBulkCreate = locrisk.ScopeBulkCreate
const ScopeBulkRead = locrisk.ScopeBulkRead
const ScopeReportsCreate = locrisk.ScopeReportsCreate
const ScopeReportsPDF = locrisk.ScopeReportsPDF
const ScopeReportsRead = locrisk.ScopeReportsRead
const ScopeUsageRead = locrisk.ScopeUsageRead
const ScopeVersionCurrent = locrisk.ScopeVersionCurrent
const ScopeVersionLegacy = locrisk.ScopeVersionLegacy
const ScopeWebhooksRead = locrisk.ScopeWebhooksRead
const ScopeWebhooksWrite = locrisk.ScopeWebhooksWrite
const StatusCompleted = locrisk.StatusCompleted
const StatusFailed = locrisk.StatusFailed
const StatusProcessing = locrisk.StatusProcessing
const StatusQueued = locrisk.StatusQueued

type APIKey = locrisk.APIKey
type Account = locrisk.Account
type AccountUpdate = locrisk.AccountUpdate
type Batch = locrisk.Batch
type BatchCounts = locrisk.BatchCounts
type BatchItem = locrisk.BatchItem
type BatchOps = locrisk.BatchOps
type DailyUsage = locrisk.DailyUsage
type DeliveryAttempt = locrisk.DeliveryAttempt
type Failure = locrisk.Failure
type HourStats = locrisk.HourStats
type Job = locrisk.Job
type JobOps = locrisk.JobOps
type KeyUse = locrisk.KeyUse
type NewBatch = locrisk.NewBatch
type NewBatchItem = locrisk.NewBatchItem
type NewJob = locrisk.NewJob
type NewKey = locrisk.NewKey
type NewWebhookEndpoint = locrisk.NewWebhookEndpoint
type OpsSummary = locrisk.OpsSummary
type PeriodUsage = locrisk.PeriodUsage
type PurgeCounts = locrisk.PurgeCounts
type PurgePolicy = locrisk.PurgePolicy
type QueueDepth = locrisk.QueueDepth
type QuotaError = locrisk.QuotaError
type Report = locrisk.Report
type RequestCounts = locrisk.RequestCounts
type WebhookDelivery = locrisk.WebhookDelivery
type WebhookEndpoint = locrisk.WebhookEndpoint
type WebhookEvent = locrisk.WebhookEvent
type WebhookOps = locrisk.WebhookOps

var AllScopes = locrisk.AllScopes
var Buckets = locrisk.Buckets
var CheckKeyName = locrisk.CheckKeyName
var ErrBadCursor = locrisk.ErrBadCursor
var ErrBusy = locrisk.ErrBusy
var ErrClosed = locrisk.ErrClosed
var ErrDeliveryNotFailed = locrisk.ErrDeliveryNotFailed
var ErrEndpointDisabled = locrisk.ErrEndpointDisabled
var ErrEndpointLimit = locrisk.ErrEndpointLimit
var ErrIdempotencyConflict = locrisk.ErrIdempotencyConflict
var ErrInvalid = locrisk.ErrInvalid
var ErrLeaseLost = locrisk.ErrLeaseLost
var ErrNotFound = locrisk.ErrNotFound
var ErrNotRetryable = locrisk.ErrNotRetryable
var ErrQuotaExceeded = locrisk.ErrQuotaExceeded
var ErrStorageFull = locrisk.ErrStorageFull
var ErrWriteQueue = locrisk.ErrWriteQueue
var MonthStart = locrisk.MonthStart
var NextMonthStart = locrisk.NextMonthStart
var ParseCIDRs = locrisk.ParseCIDRs
var ValidBucket = locrisk.ValidBucket
var ValidScope = locrisk.ValidScope
var ValidStatus = locrisk.ValidStatus

type DeliveryTask = locrisk.DeliveryTask
type DeliveryLimits = locrisk.DeliveryLimits
type JobFinalHook = locrisk.JobFinalHook
type Tx = locrisk.Tx

// Store implements every service interface of the domain (service.go at
// the root).
var _ locrisk.Store = (*Store)(nil)

type ModuleScore = locrisk.ModuleScore
type SigningKey = locrisk.SigningKey
type ReportScores = locrisk.ReportScores
